"""A state file that changed since the last full ``s3 status``, checked without pydantic (issue 30: the hooks
rewrite ``episodes/index.json`` and the user and self models every turn, and importing pydantic alone costs
several times a bare ``python -c pass``).

``schemas(home)`` runs on the typer path, which has the models loaded: each state file's JSON schema (pydantic's
``model_json_schema``), with ``"x-custom": true`` where a validator of our own runs (the schema cannot say what it
accepts). ``status_stamp.record`` keeps them; ``compile_file`` turns one into a check that says yes only where
pydantic would accept the file too, and, for the self-model (whose dump ``s3 status`` prints), only where the file
already holds exactly what its model would dump. Anything it does not know (a keyword, a format, a custom
validator whose value changed, an int where a float is dumped) is a no: the typer path then checks the file as it
always has, so a hand-broken file is still named. Standard library only.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Check = Callable[[Any], bool]

RULES_LIST = "SemanticRule[]"  # state.validate_data: the rules file is a list of SemanticRule
NOTES = frozenset(("title", "description", "default"))  # keywords that constrain nothing
# a date-time pydantic reads (a subset: no week dates, no unix numbers, offsets under 14 h), and the form it
# dumps an aware UTC time in (microseconds only when there are any)
DATETIME = re.compile(r"\d{4}-(0[1-9]|1[0-2])-[0-3]\dT([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,6})?(Z|[+-](0\d|1[0-3]):[0-5]\d)?")
DUMPED = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.(?!000000)\d{6})?Z")
BIG = 2**53  # an int beyond it may not survive a float; pydantic's own limits are wider


def schemas(home: Path) -> dict[str, Any]:
    """Each state file's schema by path (typer path only: imports pydantic and the models)."""
    from .. import models
    from ..state import state_files

    out: dict[str, Any] = {}
    for sf in state_files(home):
        model = sf.model or models.SemanticRule
        schema = model.model_json_schema()
        for name, node in [(model.__name__, schema), *schema.get("$defs", {}).items()]:
            _mark_custom(getattr(models, name, None), node)
        out[str(sf.path(home))] = {"model": model.__name__ if sf.model else RULES_LIST, "schema": schema}
    return out


def _mark_custom(model: Any, node: dict[str, Any]) -> None:
    """``x-custom`` on a model with a model validator of ours (or one not found in ``models``), and on each
    field a field validator reads or that carries one in its annotation (``AfterValidator``...)."""
    decorators = getattr(model, "__pydantic_decorators__", None)
    if decorators is None or decorators.model_validators or decorators.root_validators:
        node["x-custom"] = True
        return
    fields = {f for dec in decorators.field_validators.values() for f in dec.info.fields}
    fields |= {name for name, info in model.model_fields.items()
               if any(type(m).__module__.startswith("pydantic.functional") for m in info.metadata)}
    for field in fields:
        node["properties"][field]["x-custom"] = True


def compile_file(entry: dict[str, Any], exact: bool, custom: dict[str, Any]) -> Check:
    """The check of one file's parsed JSON. ``exact``: also what its model dumps. ``custom``: the values last
    validated of the root's fields with a validator of ours (the same value passes again)."""
    schema = dict(entry["schema"])
    defs = schema.pop("$defs", {})
    node = _node(schema, defs, exact, custom)
    if entry["model"] == RULES_LIST:
        return _array(node)
    return node


def custom_fields(entry: dict[str, Any]) -> list[str]:
    """The root fields a validator of ours reads (``compile_file`` wants their values last validated)."""
    props = entry["schema"].get("properties", {})
    return [k for k, s in props.items() if isinstance(s, dict) and s.get("x-custom")]


def _never(value: Any) -> bool:
    return False


def _any(value: Any) -> bool:
    return True


def _types(schema: Any) -> frozenset[type] | None:
    """The JSON types a schema passes when its type alone decides (a string, a bool, null, an int without
    bounds, a union of them), else None. Checked as one set lookup: most fields of the index are such."""
    if not isinstance(schema, dict) or schema.get("x-custom"):
        return None
    rest = set(schema) - NOTES
    if rest == {"anyOf"}:
        branches = [_types(s) for s in schema["anyOf"]]
        return None if any(b is None for b in branches) else frozenset().union(*branches)  # type: ignore[arg-type]
    return SIMPLE.get(str(schema["type"])) if rest == {"type"} else None


SIMPLE = {"string": frozenset((str,)), "boolean": frozenset((bool,)), "null": frozenset((type(None),)),
          "integer": frozenset((int,))}


def _node(schema: Any, defs: dict[str, Any], exact: bool, custom: dict[str, Any] | None = None) -> Check:  # noqa: C901 - one branch per JSON-schema keyword, each a line
    if schema is True or schema == {}:
        return _any
    types = _types(schema)
    if types is not None:
        found = types
        return lambda v: type(v) in found
    if not isinstance(schema, dict) or schema.get("x-custom"):
        return _never
    if "$ref" in schema:
        ref = schema["$ref"]
        if set(schema) - NOTES != {"$ref"} or not ref.startswith("#/$defs/") or ref[8:] not in defs:
            return _never
        return _node(defs[ref[8:]], defs, exact)
    if "anyOf" in schema:
        branches = [_node(s, defs, exact) for s in schema["anyOf"]]
        return _never if set(schema) - NOTES != {"anyOf"} else lambda v: any(b(v) for b in branches)
    if "enum" in schema or "const" in schema:
        return _enum(schema)
    kind = schema.get("type")
    if kind == "object":
        return _object(schema, defs, exact, custom)
    if kind == "array":
        if set(schema) - NOTES != {"type", "items"}:
            return _never
        types = _types(schema["items"])
        if types is not None:
            return lambda v: type(v) is list and set(map(type, v)) <= types
        columns = None if exact else _columns(_resolve(schema["items"], defs), defs)
        return columns or _array(_node(schema["items"], defs, exact))
    return _scalar(schema, exact)


def _enum(schema: dict[str, Any]) -> Check:
    values = schema["enum"] if "enum" in schema else [schema["const"]]
    if set(schema) - NOTES - {"type"} not in ({"enum"}, {"const"}) or not all(type(e) is str for e in values):
        return _never
    allowed = frozenset(values)
    return lambda v: type(v) is str and v in allowed


def _scalar(schema: dict[str, Any], exact: bool) -> Check:
    kind, rest = schema.get("type"), set(schema) - NOTES - {"type"}
    if kind == "string" and not rest:
        return lambda v: type(v) is str
    if kind == "string" and rest == {"format"} and schema["format"] == "date-time":
        return _dumped_datetime if exact else _datetime
    if kind == "boolean" and not rest:
        return lambda v: type(v) is bool
    if kind == "null" and not rest:
        return lambda v: v is None
    if kind in ("integer", "number") and rest <= {"minimum", "maximum"}:
        lo, hi = schema.get("minimum", -BIG), schema.get("maximum", BIG)
        types = (int,) if kind == "integer" else (float,) if exact else (int, float)
        return lambda v: type(v) in types and lo <= v <= hi and -BIG <= v <= BIG  # NaN fails every comparison
    return _never


def _datetime(value: Any) -> bool:
    if type(value) is not str or DATETIME.fullmatch(value) is None:
        return False
    try:
        return datetime.fromisoformat(value).year >= 1
    except ValueError:  # 30 February
        return False


def _dumped_datetime(value: Any) -> bool:
    return _datetime(value) and DUMPED.fullmatch(value) is not None


def _array(item: Check) -> Check:
    if item is _any:
        return lambda v: type(v) is list
    return lambda v: type(v) is list and all(map(item, v))


class _Missing:
    """What a field a dict lacks reads as in a column (``_columns``)."""


MISSING = _Missing()


def _resolve(schema: Any, defs: dict[str, Any]) -> Any:
    """The schema a bare ``$ref`` names (else the schema itself)."""
    if isinstance(schema, dict) and set(schema) - NOTES == {"$ref"} and schema["$ref"].startswith("#/$defs/"):
        return defs.get(schema["$ref"][8:])
    return schema


def _columns(schema: Any, defs: dict[str, Any]) -> Check | None:
    """A list of objects (the episode index's 1,000 entries) checked a field at a time: a field whose type alone
    decides, or one of a few strings, in one pass of C over the list; None where ``_object`` must look at each
    (an exact check, extra fields with a schema of their own, a validator of ours, another keyword)."""
    if not (isinstance(schema, dict) and schema.get("type") == "object" and "properties" in schema):
        return None
    if set(schema) - NOTES - {"type", "properties", "required", "additionalProperties"} or \
            schema.get("additionalProperties", True) not in (True, {}):
        return None
    simple: dict[str, frozenset[Any]] = {}
    enums: dict[str, frozenset[Any]] = {}
    others: dict[str, Check] = {}
    for k, s in schema["properties"].items():
        if not isinstance(s, dict) or s.get("x-custom"):
            return None
        types = _types(s)
        if types is not None:
            simple[k] = types | {_Missing}
        elif ("enum" in s or "const" in s) and _enum(s) is not _never:
            enums[k] = frozenset(s["enum"] if "enum" in s else [s["const"]]) | {MISSING}
        else:
            others[k] = _node(s, defs, False)
    required = frozenset(schema.get("required", ()))
    from operator import methodcaller

    def check(v: Any) -> bool:
        if type(v) is not list or (v and set(map(type, v)) != {dict}) or not all(map(required.issubset, v)):
            return False
        try:
            if not all(set(map(type, map(methodcaller("get", k, MISSING), v))) <= t for k, t in simple.items()):
                return False
            if not all(set(map(methodcaller("get", k, MISSING), v)) <= e for k, e in enums.items()):
                return False
        except TypeError:  # an unhashable value where one of a few strings goes
            return False
        return all(f(x) for k, f in others.items() for x in map(methodcaller("get", k, MISSING), v) if x is not MISSING)

    return check


def _object(schema: dict[str, Any], defs: dict[str, Any], exact: bool, custom: dict[str, Any] | None) -> Check:
    if set(schema) - NOTES - {"type", "properties", "required", "additionalProperties"}:
        return _never
    fields = schema.get("properties", {})
    simple = {k: t for k, t in ((k, _types(s)) for k, s in fields.items()) if t is not None}
    props = {k: _field(k, s, defs, exact, custom) for k, s in fields.items() if k not in simple}
    required = frozenset(schema.get("required", ()))
    extra = _node(schema["additionalProperties"], defs, exact) if "additionalProperties" in schema else None
    if extra is None and (exact or "properties" not in schema):
        extra = _never  # a model that drops what it does not know dumps without it
    names = list(fields)
    count = len(names)

    def check(v: Any) -> bool:
        if type(v) is not dict:
            return False
        if exact and list(v)[:count] != names:
            return False  # a field missing (its default would be dumped) or in another order
        if not exact and not required <= v.keys():
            return False
        for k, x in v.items():
            types = simple.get(k)
            if types is not None:
                if type(x) not in types:
                    return False
                continue
            f = props.get(k, extra)
            if f is not None and not f(x):
                return False
        return True

    return check


def _field(name: str, schema: Any, defs: dict[str, Any], exact: bool, custom: dict[str, Any] | None) -> Check:
    """A field; one a validator of ours reads passes only as the value last validated (root fields only)."""
    if not (isinstance(schema, dict) and schema.get("x-custom")):
        return _node(schema, defs, exact)
    if custom is None or name not in custom:
        return _never
    import json

    seen = json.dumps(custom[name])
    return lambda v: json.dumps(v) == seen
