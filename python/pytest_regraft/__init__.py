"""pytest's entry point for regraft (``pytest11``): adds ``--regraft RULES`` and
``--regraft-live``.

Only when that option is given does it import regraft and register the collector,
:class:`regraft.pytest_plugin.RegraftPlugin`. This module lives outside the ``regraft`` package
because importing any ``regraft.*`` module runs ``regraft/__init__.py``, which loads the native
extension: every pytest run of every project with regraft installed would pay for that.
"""


def pytest_addoption(parser):
    """Adds ``--regraft RULES`` (repeatable)."""
    group = parser.getgroup("regraft")
    group.addoption(
        "--regraft",
        action="append",
        default=[],
        metavar="RULES",
        help="a rule file or a folder of them (repeatable): each rule's test cases, and each "
        "rule checked against the installed packages it requires, as test items",
    )


    group.addoption(
        "--regraft-live",
        action="store_true",
        default=False,
        help="liveness on for every regraft hook the session installs (REGRAFT_LIVE=1): a test "
        "marked regraft_smoke fails where a rule's patched code did not run in it, and the "
        "summary lists patched functions that never ran",
    )


def pytest_load_initial_conftests(early_config, parser, args):
    """With ``--regraft-live``, sets ``REGRAFT_LIVE=1`` before any conftest runs: a hook a
    conftest installs at import is live too."""
    if getattr(early_config.known_args_namespace, "regraft_live", False):
        import os

        os.environ["REGRAFT_LIVE"] = "1"


def pytest_configure(config):
    """Declares the ``regraft_smoke`` marker; registers regraft's collector where
    ``--regraft`` names rules and the liveness checks with ``--regraft-live``; imports nothing
    otherwise."""
    config.addinivalue_line(
        "markers",
        "regraft_smoke(*rules): with --regraft-live, the test fails unless each rule (every "
        "rule that patched a module, where none is named) ran some of its patched code in it",
    )
    if config.getoption("regraft_live", default=False):
        from regraft.pytest_plugin import LivePlugin

        config.pluginmanager.register(LivePlugin(), LivePlugin.NAME)
    paths = config.getoption("regraft", default=None)
    if not paths:
        return
    from regraft.pytest_plugin import RegraftPlugin

    config.pluginmanager.register(RegraftPlugin(config, paths), RegraftPlugin.NAME)
