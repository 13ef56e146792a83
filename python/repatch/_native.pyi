"""Type stubs for the extension module built from the repatch crate (src/pyapi.rs)."""

from typing import Dict, List, Optional, Tuple

class RepatchError(Exception):
    """Any repatch failure; str() is the rendered diagnostic."""

    rule_id: Optional[str]
    kind: str
    path: Optional[str]
    line: Optional[int]
    column: Optional[int]

class RuleError(RepatchError):
    """A rule file or rule text is wrong, or a rule's package version is unknown."""

class DriftError(RepatchError):
    """A rule found a different number of matches than it expects: upstream drifted."""

class ConflictError(RepatchError):
    """Two rules edit overlapping code."""

class ParseError(RepatchError):
    """The source, or the patched result, is not valid Python."""

class ActionError(RepatchError):
    """An action cannot be carried out on a match, or its result is not a fixed point."""

class NativeRules:
    @staticmethod
    def load(path: str) -> NativeRules: ...
    @staticmethod
    def parse(text: str, format: str, name: str) -> NativeRules: ...
    def ids(self) -> List[str]: ...
    def packages(self) -> List[str]: ...
    def apply(
        self,
        source: str,
        filename: Optional[str],
        versions: List[Tuple[str, str]],
        phase: Optional[str],
        context: Optional[str],
    ) -> Tuple[str, List[RepatchError]]: ...
    def check(
        self,
        source: str,
        filename: Optional[str],
        versions: List[Tuple[str, str]],
        phase: Optional[str],
        context: Optional[str],
    ) -> Tuple[str, Dict[str, RepatchError]]: ...
