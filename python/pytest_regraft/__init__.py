"""pytest's entry point for regraft (``pytest11``): adds ``--regraft RULES``.

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


def pytest_configure(config):
    """Registers regraft's collector where ``--regraft`` names rules; imports nothing otherwise."""
    paths = config.getoption("regraft", default=None)
    if not paths:
        return
    from regraft.pytest_plugin import RegraftPlugin

    config.pluginmanager.register(RegraftPlugin(config, paths), RegraftPlugin.NAME)
