"""Type stubs for the extension module built from the regraft crate (src/pyapi.rs)."""

from typing import Dict, List, Optional, Tuple

__version__: str

class RegraftError(Exception):
    """Any regraft failure; str() is the rendered diagnostic."""

    rule_id: Optional[str]
    kind: str
    path: Optional[str]
    line: Optional[int]
    column: Optional[int]

class RuleError(RegraftError):
    """A rule file or rule text is wrong, or a rule's package version is unknown."""

class DriftError(RegraftError):
    """A rule found a different number of matches than it expects: upstream drifted."""

class ConflictError(RegraftError):
    """Two rules edit overlapping code."""

class ParseError(RegraftError):
    """The source, or the patched result, is not valid Python."""

class ActionError(RegraftError):
    """An action cannot be carried out on a match, or its result is not a fixed point."""

class NativeRules:
    @staticmethod
    def load(path: str) -> NativeRules: ...
    @staticmethod
    def parse(text: str, format: str, name: str) -> NativeRules: ...
    def texts(self) -> List[str]: ...
    def without(self, names: List[str]) -> Optional[NativeRules]: ...
    def sources(self) -> List[Tuple[str, str, str]]: ...
    @staticmethod
    def parse_many(sources: List[Tuple[str, str, str]]) -> NativeRules: ...
    def ids(self) -> List[str]: ...
    def packages(self) -> List[str]: ...
    def would_run(
        self,
        filename: Optional[str],
        versions: List[Tuple[str, str]],
        phase: Optional[str],
        unit: Optional[str],
    ) -> bool: ...
    def apply(
        self,
        source: str,
        filename: Optional[str],
        versions: List[Tuple[str, str]],
        phase: Optional[str],
        context: Optional[str],
        compiled: bool = False,
    ) -> Tuple[str, List[RegraftError], str, List[Tuple[str, int, int]]]:
        """The output, `on_miss: warn` drift, the per-rule reports (JSON) and where each rule's
        edits wrote in the output: `(rule id, start, end)` as `str` indices."""
        ...
    def check(
        self,
        source: str,
        filename: Optional[str],
        versions: List[Tuple[str, str]],
        phase: Optional[str],
        context: Optional[str],
        whole: bool = False,
    ) -> Tuple[str, Dict[str, RegraftError]]: ...

def main(argv: List[str]) -> int:
    """Runs the `regraft` command line with `argv` (the program name first); its exit code."""
    ...
