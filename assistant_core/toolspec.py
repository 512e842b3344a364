"""A tool action is one object: `ToolSpec`, registered once (issue 26), in the manner of smolagents' `Tool`
(a `name`, a `description` and `inputs` that the model's prompt shows from the same object).

    spec = tool_spec("set_alarm")
    spec.schema()              # the JSON function schema the model's prompt lists
    spec.gate                  # GateRule: which apps answer it, what needs a yes, read-only or not
    spec.read_back(action)     # what a confirmation says it will do, in both languages
    spec.validate(fields)      # the Action's fields checked and normalised (ValueError says what is wrong)

The core half of a tool lives here and in `assistant_core.toolbox` (the specs): everything the model,
the parser, `types.Action`, the gate (`assistant_core.toolgate`) and the confirmation
(`assistant_core.confirm`) need. The harness half — the shell path on the phone and the outcome check
(`harness.verify.checks`) — is attached by `harness.tools.shell_tool(name, ...)` in one place, and
`harness.tools.check_registry()` refuses a spec without its harness half and a harness half without a
spec. So a new tool is its spec in `assistant_core/toolbox.py` plus its shell path in `harness/tools.py`.

This module imports nothing of the project but `i18n`, so `types` can build its action kinds from the
registry without an import cycle.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from assistant_core.i18n import Text

# The Action fields a tool's inputs may fill (types.Action's tool fields).
ACTION_FIELDS = ("number", "contact", "text", "clock", "setting", "value", "query", "url", "duration_ms")
_SCHEMA_TYPES = ("string", "number", "integer", "boolean")
_NAME_RE = re.compile(r"[a-z][a-z0-9_]*")


class ToolSpecError(ValueError):
    """A tool that cannot be registered: a missing or contradictory part."""


@dataclass(frozen=True)
class Input:
    """One argument of a tool: `keys[0]` is the name the prompt shows, the others the synonyms models
    write for it; `field` is the Action field it fills."""

    field: str
    type: str
    description: str
    keys: tuple[str, ...]
    enum: tuple[str, ...] = ()
    required: bool = True

    @property
    def name(self) -> str:
        return self.keys[0]


@dataclass(frozen=True)
class GateRule:
    """How the safety gate judges the tool (assistant_core.toolgate interprets it; nothing is lowered):

    - `handlers`: the apps that answer its intent, in the order a phone's default usually is; the first
      installed one is judged by the caregiver's allow-list. A callable gets the action (a query of the
      message thread needs Messages, other queries nothing). Empty: the phone's own shell.
    - `confirm`: a safety.Category that always needs a yes (the mandatory floor: call, send), with the
      recipient read back from the phone's contacts, never from the model's words.
    - `caregiver`: a Category the caregiver may ask to confirm (a setting change, opening an app).
    - `read_only`: it only reads the phone (harness.tools runs only reading commands for it).
    - `secret_text`: its text is checked for card numbers and codes (a hand-over, as for typing).
    """

    handlers: tuple[str, ...] | Callable[[Any], tuple[str, ...] | None] = ()
    confirm: str | None = None
    caregiver: str | None = None
    read_only: bool = False
    secret_text: bool = False

    def candidates(self, action: Any) -> tuple[str, ...] | None:
        """The handler packages for this action; None when it needs no app beyond the shell."""
        found = self.handlers(action) if callable(self.handlers) else self.handlers
        return tuple(found) if found else None


@dataclass(frozen=True)
class ToolSpec:
    """One tool action: what the model is shown, how its Action is checked, how the gate judges it and
    how it is read back. `validate` takes the Action's fields (a dict) and returns them normalised; it
    raises ValueError with a message the model can act on."""

    name: str
    description: str
    inputs: tuple[Input, ...]
    gate: GateRule
    read_back: Callable[[Any], Text]
    validate: Callable[[dict[str, Any]], dict[str, Any]]
    aliases: tuple[str, ...] = ()
    # Arguments that are not plain fields (a timer given in seconds or minutes): args -> fields to add.
    convert: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None
    extra_schema: Mapping[str, Any] = field(default_factory=dict)

    @property
    def fields(self) -> frozenset[str]:
        return frozenset(i.field for i in self.inputs)

    def schema(self) -> dict[str, Any]:
        """The JSON function schema the model's prompt lists (the same shape as the GUI tools')."""
        props: dict[str, Any] = {}
        for i in self.inputs:
            prop: dict[str, Any] = {"description": i.description, "type": i.type}
            if i.enum:
                prop["enum"] = list(i.enum)
            props[i.name] = prop
        props.update(self.extra_schema)
        params = {"type": "object", "properties": props, "required": [i.name for i in self.inputs if i.required]}
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": params}}


TOOLS: dict[str, ToolSpec] = {}
ALIASES: dict[str, str] = {}


def register(spec: ToolSpec) -> ToolSpec:
    """Add a tool to the registry; ToolSpecError when a part is missing or contradicts another."""
    problems = spec_problems(spec)
    if spec.name in TOOLS:
        problems.append(f"a tool named {spec.name!r} is already registered")
    for alias in (spec.name, *spec.aliases):
        if ALIASES.get(alias, spec.name) != spec.name:
            problems.append(f"{alias!r} already names the tool {ALIASES[alias]!r}")
    if problems:
        raise ToolSpecError(f"tool {spec.name!r} cannot be registered: " + "; ".join(problems))
    TOOLS[spec.name] = spec
    for alias in (spec.name, *spec.aliases):
        ALIASES[alias] = spec.name
    return spec


def spec_problems(spec: ToolSpec) -> list[str]:
    """Everything missing or contradictory in a spec (empty when it can be registered)."""
    problems = []
    if not isinstance(spec.name, str) or not _NAME_RE.fullmatch(spec.name):
        problems.append("the name must be snake_case")
    if not (isinstance(spec.description, str) and spec.description.strip()):
        problems.append("it needs a description for the model")
    if not isinstance(spec.gate, GateRule):
        problems.append("it needs a GateRule")
    else:
        g = spec.gate
        if g.read_only and (g.confirm or g.caregiver):
            problems.append("a read-only tool has nothing to confirm")
        if not g.read_only and not (g.handlers or g.confirm or g.caregiver):
            problems.append("a tool that changes the phone needs handler apps (judged by the allow-list) "
                            "or a confirmation category")
        if g.secret_text and "text" not in spec.fields:
            problems.append("secret_text needs a text input")
    for what, fn in (("read_back", spec.read_back), ("validate", spec.validate)):
        if not callable(fn):
            problems.append(f"it needs {what}")
    for i in spec.inputs:
        if i.field not in ACTION_FIELDS:
            problems.append(f"input {i.keys!r} fills {i.field!r}, not an Action field ({', '.join(ACTION_FIELDS)})")
        if i.type not in _SCHEMA_TYPES:
            problems.append(f"input {i.keys!r} has type {i.type!r}")
        if not i.keys or not i.description.strip():
            problems.append(f"input for {i.field!r} needs a name and a description")
    return problems


def tool_spec(name: str) -> ToolSpec:
    """The registered tool for a name or one of its aliases; KeyError when there is none."""
    return TOOLS[ALIASES.get(name, name)]


def tool_names() -> tuple[str, ...]:
    return tuple(TOOLS)
