"""GitHub's published contract, checked on every request and every answer of the GitHub fakes.

The evidence is GitHub's, not the project's: the REST OpenAPI description of api.github.com
(npm ``@octokit/openapi``) and the GraphQL schema (npm ``@octokit/graphql-schema``), both
installed in ``tests/interop/node_modules`` by ``scripts/dev-setup``. ``memory-agent eval``
checks its runs with them too, and says so when they are not there.

- REST: the path and method must be an operation of the description; every query parameter one it
  declares, with a value of its type; the JSON body must match the operation's request schema;
  the fake's answer must be a status the operation documents, with a body matching that status's
  schema (statuses of 500 and over are the fakes' fault injection and are not checked).
- GraphQL: the document must parse and validate against the schema, the variables must coerce to
  their declared types, and the fake's ``data`` must be exactly what executing the document over
  it yields: every field asked for, of its type, nothing else.
- Descriptions that matter but no type expresses ("The unqualified name of the branch") are
  explicit rules (``INPUT_RULES``, ``BODY_RULES``); each rule checks first that the description
  still says what the rule relies on.

Every violation is kept in ``violations``; ``tests/conftest.py`` fails a test that left any.
The description is large, so it is loaded once per session and each operation's validators are
built the first time a request reaches it.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import graphql
from graphql.execution.values import get_variable_values
from jsonschema import Draft4Validator  # type: ignore[import-untyped]
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

# A checkout's tests/interop/node_modules (``scripts/dev-setup`` installs it), or where
# MEMORY_AGENT_GITHUB_DESCRIPTIONS names a node_modules folder holding the two packages.
CHECKOUT = Path(__file__).resolve().parents[3]
NODE_MODULES = Path(
    os.environ.get("MEMORY_AGENT_GITHUB_DESCRIPTIONS")
    or CHECKOUT / "tests" / "interop" / "node_modules"
)
OPENAPI = NODE_MODULES / "@octokit" / "openapi" / "generated" / "api.github.com.json"
# The schema as GitHub answers introspection (its schema.graphql defines two fields twice).
GRAPHQL_SCHEMA = NODE_MODULES / "@octokit" / "graphql-schema" / "schema.json"
_BASE = "urn:github-rest-description"
# Bad credentials, and rate limits (primary and secondary): GraphQL's answers besides 200.
_GRAPHQL_HTTP_REFUSALS = (401, 403)
_STATUS_UNCHECKED = 500
# What any operation may answer though few document it: bad credentials, no permission or a
# rate limit, nothing visible there, a secondary rate limit.
_ANY_OPERATION = (
    401,
    403,
    404,
    429,
)  # the fakes answer 5xx to inject faults; GitHub documents few of them

violations: list[str] = []  # what any GitHub fake saw GitHub refuse, since the last take()
_lock = threading.Lock()


def missing_reason() -> str | None:
    """Why the published descriptions are not here (None when they are)."""
    for path in (OPENAPI, GRAPHQL_SCHEMA):
        if not path.is_file():
            where = path.relative_to(NODE_MODULES)
            return (
                f"{where} is missing from {NODE_MODULES.name} (run `npm ci` in tests/interop of "
                "a memory-agent checkout, or set MEMORY_AGENT_GITHUB_DESCRIPTIONS)"
            )
    return None


def enforced() -> bool:
    """Whether the contract can be checked here; under ``CI=true`` it must be."""
    return missing_reason() is None or os.environ.get("CI") == "true"


def record(found: list[str]) -> None:
    with _lock:
        violations.extend(found)


def take() -> list[str]:
    """The violations recorded so far, which are forgotten."""
    with _lock:
        found = list(violations)
        violations.clear()
    return found


# -- REST ----------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Operation:
    method: str
    template: str
    pattern: re.Pattern[str]
    specificity: int  # literal characters of the template: the most specific match wins
    spec: dict[str, Any]
    path_parameters: tuple[dict[str, Any], ...]

    def parameters(self) -> dict[tuple[str, str], dict[str, Any]]:
        """(where, name) → the parameter, the path's and the operation's own."""
        found = [*self.path_parameters, *self.spec.get("parameters", [])]
        resolved = [_resolve(parameter) for parameter in found]
        return {(p["in"], p["name"]): p for p in resolved}


def check_rest(method: str, url: str, body: str, reply: tuple[int, str] | None) -> list[str]:
    """What GitHub's description refuses in one request and the fake's answer to it."""
    path = unquote(urlsplit(url).path)
    path = re.sub(r"^/api/v3(?=/)", "", path)
    where = f"{method} {path}"
    matches = [op for op in _operations() if op.pattern.fullmatch(path)]
    if not matches:
        return [f"{where}: GitHub's REST API has no such path"]
    for operation in matches:
        if operation.method == method:
            break
    else:
        return [f"{where}: GitHub's REST API has no {method} on {matches[0].template}"]
    found = _request_problems(operation, path, url, body)
    if reply is not None:
        found += _reply_problems(operation, *reply)
    return [f"{where} ({operation.template}): {problem}" for problem in found]


def _request_problems(operation: Operation, path: str, url: str, body: str) -> list[str]:
    problems: list[str] = []
    parameters = operation.parameters()
    match = operation.pattern.fullmatch(path)
    assert match is not None
    for name, value in match.groupdict().items():
        problems += _value_problems(parameters[("path", name)], value)
    query = parse_qs(urlsplit(url).query, keep_blank_values=True)
    for name, values in query.items():
        parameter = parameters.get(("query", name))
        if parameter is None:
            problems.append(f"query parameter {name!r} is not one GitHub documents")
            continue
        problems += [p for value in values for p in _value_problems(parameter, value)]
    for (where, name), parameter in parameters.items():
        if where == "query" and parameter.get("required") and name not in query:
            problems.append(f"the required query parameter {name!r} is missing")
    problems += _body_problems(operation, body)
    return problems


def _value_problems(parameter: dict[str, Any], raw: str) -> list[str]:
    schema = parameter.get("schema", {})
    value: Any = raw
    kind = schema.get("type")
    if kind == "integer":
        if not re.fullmatch(r"-?\d+", raw):
            return [f"{parameter['in']} parameter {parameter['name']!r} is {raw!r}, not an integer"]
        value = int(raw)
    elif kind == "boolean":
        if raw not in ("true", "false"):
            return [f"{parameter['in']} parameter {parameter['name']!r} is {raw!r}, not a boolean"]
        value = raw == "true"
    elif kind == "array":
        value = raw.split(",")
    errors = _validator(json.dumps(schema)).iter_errors(value)
    return [f"{parameter['in']} parameter {parameter['name']!r}: {e.message}" for e in errors]


def _body_problems(operation: Operation, body: str) -> list[str]:
    request_body = _resolve(operation.spec.get("requestBody") or {})
    content = request_body.get("content", {})
    if not body.strip():
        return (
            ["the request has no body, which GitHub requires"]
            if request_body.get("required")
            else []
        )
    if "application/json" not in content:
        return ["the request has a body, which this operation does not take"]
    try:
        value = json.loads(body)
    except ValueError:
        return ["the request body is not JSON"]
    schema = content["application/json"].get("schema", {})
    problems = _schema_problems(schema, value, "request body")
    for rule in BODY_RULES.get((operation.method, operation.template), ()):
        problems += rule.problems(schema, value)
    return problems


def _reply_problems(operation: Operation, status: int, body: str) -> list[str]:
    if status >= _STATUS_UNCHECKED:
        return []
    documented = operation.spec.get("responses", {})
    if str(status) not in documented and status in _ANY_OPERATION:
        return _error_problems(status, body)
    if str(status) not in documented:
        listed = ", ".join(documented)
        return [f"the fake answered {status}, which GitHub does not document here ({listed})"]
    response = _resolve(documented[str(status)])
    schema = response.get("content", {}).get("application/json", {}).get("schema")
    if schema is None:
        return [] if not body.strip() else [f"the fake's {status} has a body GitHub does not send"]
    try:
        value = json.loads(body)
    except ValueError:
        return [f"the fake's {status} answer is not JSON"]
    return _schema_problems(schema, value, f"the fake's {status} answer")


def _error_problems(status: int, body: str) -> list[str]:
    """An error any operation may answer: GitHub's error body, a message at least."""
    try:
        value = json.loads(body)
    except ValueError:
        value = None
    if isinstance(value, dict) and isinstance(value.get("message"), str):
        return []
    return [f"the fake's {status} is not GitHub's error body (a JSON object with a message)"]


def _schema_problems(schema: dict[str, Any], value: Any, what: str) -> list[str]:
    errors = sorted(_validator(json.dumps(schema, sort_keys=True)).iter_errors(value), key=str)
    return [
        f"{what} at /{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}" for e in errors[:5]
    ]


@cache
def _validator(schema_text: str) -> Draft4Validator:
    """A validator of one schema of the description (OpenAPI 3.0 schemas are draft 4's, with
    ``nullable``, which ``_description`` rewrote)."""
    return Draft4Validator(json.loads(schema_text), registry=_registry())


@cache
def _description() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(OPENAPI.read_text())
    _rewrite(document)
    return document


@cache
def _registry() -> Registry[Any]:
    resource: Resource[Any] = DRAFT4.create_resource(_description())
    registry: Registry[Any] = Registry().with_resource(_BASE, resource)
    return registry


def _rewrite(node: Any) -> None:
    """OpenAPI 3.0 → JSON Schema: ``nullable`` becomes a null type, local references absolute."""
    if isinstance(node, list):
        for item in node:
            _rewrite(item)
        return
    if not isinstance(node, dict):
        return
    for value in node.values():
        _rewrite(value)
    reference = node.get("$ref")
    if isinstance(reference, str) and reference.startswith("#"):
        node["$ref"] = _BASE + reference
    if node.pop("nullable", False) is True:
        if "type" in node and isinstance(node["type"], str):
            node["type"] = [node["type"], "null"]
            if "enum" in node:
                node["enum"] = [*node["enum"], None]
        elif "type" not in node:
            inner = {key: node.pop(key) for key in list(node) if key not in ("description",)}
            node["anyOf"] = [inner, {"type": "null"}]


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    """A parameter, request body or response, with its ``$ref`` followed."""
    while "$ref" in node:
        pointer = str(node["$ref"]).removeprefix(_BASE + "#/").split("/")
        found: Any = _description()
        for part in pointer:
            found = found[part.replace("~1", "/").replace("~0", "~")]
        node = found
    return node


@cache
def _operations() -> tuple[Operation, ...]:
    operations = []
    for template, item in _description()["paths"].items():
        names = re.findall(r"\{([^}]+)\}", template)
        regex = ""
        for part in re.split(r"(\{[^}]+\})", template):
            if part.startswith("{"):
                name = part[1:-1]
                # A last parameter may hold slashes: a file's path, a ref's heads/name.
                last = name == names[-1] and template.endswith(part)
                regex += f"(?P<{_group(name)}>{'.+' if last else '[^/]+'})"
            else:
                regex += re.escape(part)
        pattern = re.compile(regex)
        literal = len(re.sub(r"\{[^}]+\}", "", template))
        for method, spec in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                operations.append(
                    Operation(
                        method=method.upper(),
                        template=template,
                        pattern=pattern,
                        specificity=literal,
                        spec=spec,
                        path_parameters=tuple(item.get("parameters", [])),
                    )
                )
    return tuple(sorted(operations, key=lambda op: -op.specificity))


def _group(name: str) -> str:
    return name.replace("-", "_")


def documented(method: str, template: str, value: Any, status: int = 200) -> Any:
    """``value`` completed with the fields GitHub always sends (those its schema requires) that
    ``value`` lacks, taken from GitHub's example answer of that operation (for a list, each item
    from the example's first). Without the description, ``value`` as it is."""
    if missing_reason() is not None:
        return value
    response = _resolve(_description()["paths"][template][method.lower()]["responses"][str(status)])
    content = response["content"]["application/json"]
    example = _resolve(next(iter(content["examples"].values())))["value"]
    return json.loads(json.dumps(_filled(example, value, content["schema"])))


def _filled(example: Any, value: Any, schema: dict[str, Any]) -> Any:
    """``value``, with the required fields it lacks from ``example``, object by object."""
    schema = _object_schema(schema, value)
    if isinstance(example, list) and isinstance(value, list) and example:
        return [_filled(example[0], item, schema.get("items", {})) for item in value]
    if not (isinstance(example, dict) and isinstance(value, dict)):
        return value
    properties = schema.get("properties", {})
    missing = {key: example[key] for key in schema.get("required", []) if key in example}
    given = {
        key: _filled(example.get(key), item, properties.get(key, {})) for key, item in value.items()
    }
    return {**missing, **given}


def _object_schema(schema: dict[str, Any], value: Any = None) -> dict[str, Any]:
    """The schema with references followed and ``allOf`` merged; of alternatives, the one the
    discriminator names for ``value``, else the first that is not null."""
    schema = _resolve(schema)
    discriminator = schema.get("discriminator", {})
    chosen = discriminator.get("mapping", {}).get(
        value.get(discriminator.get("propertyName")) if isinstance(value, dict) else None
    )
    if chosen is not None:
        return _object_schema({"$ref": _BASE + chosen.removeprefix(_BASE)}, value)
    for alternatives in ("anyOf", "oneOf"):
        if alternatives in schema:
            options = [_resolve(o) for o in schema[alternatives]]
            schema = next((o for o in options if o.get("type") != "null"), schema)
    if "allOf" in schema:
        merged: dict[str, Any] = {"properties": {}, "required": []}
        for part in (_object_schema(part, value) for part in schema["allOf"]):
            merged["properties"].update(part.get("properties", {}))
            merged["required"] += part.get("required", [])
        return merged
    return schema


# -- rules the descriptions state in words -------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Rule:
    """A documented constraint no type expresses: ``documented`` must still be in the field's
    description, and ``holds`` must be true of every value sent."""

    field: str
    documented: str
    holds: Callable[[Any], bool]
    refusal: str

    def check(self, description: str | None, value: Any) -> list[str]:
        if self.documented not in (description or ""):
            return [
                f"{self.field}: the rule relies on {self.documented!r}, which GitHub's "
                f"description no longer says: {description!r}"
            ]
        return [] if self.holds(value) else [f"{self.field} is {value!r}: {self.refusal}"]

    def problems(self, schema: dict[str, Any], body: Any) -> list[str]:
        if not isinstance(body, dict) or self.field not in body:
            return []
        description = _resolve(schema).get("properties", {}).get(self.field, {}).get("description")
        return self.check(description, body[self.field])


# GraphQL input fields: "Type.field" → the rule.
INPUT_RULES: dict[str, Rule] = {
    "CommittableBranch.branchName": Rule(
        field="CommittableBranch.branchName",
        documented="The unqualified name of the branch",
        holds=lambda name: isinstance(name, str) and not name.startswith("refs/"),
        refusal='GitHub documents the unqualified name ("main", not "refs/heads/main") and '
        'answers "A ref named refs/heads/refs/heads/… does not exist"',
    ),
}

# REST request bodies: (method, path template) → the rules of its properties.
BODY_RULES: dict[tuple[str, str], tuple[Rule, ...]] = {
    ("POST", "/repos/{owner}/{repo}/git/refs"): (
        Rule(
            field="ref",
            documented="If it doesn't start with 'refs' and have at least two slashes, it will "
            "be rejected",
            holds=lambda ref: (
                isinstance(ref, str) and ref.startswith("refs") and ref.count("/") >= 2
            ),
            refusal="GitHub rejects a ref that does not start with refs and have two slashes",
        ),
    ),
}


# -- GraphQL -------------------------------------------------------------------------------------


@cache
def graphql_schema() -> graphql.GraphQLSchema:
    return graphql.build_client_schema(json.loads(GRAPHQL_SCHEMA.read_text()))


def check_graphql(body: str, reply: tuple[int, str] | None) -> list[str]:
    """What GitHub's schema refuses in one GraphQL request and the fake's answer to it."""
    try:
        request = json.loads(body or "{}")
        document = graphql.parse(str(request["query"]), no_location=True)
    except (ValueError, KeyError, TypeError, graphql.GraphQLError) as exc:
        return [f"GraphQL: the request is not a GraphQL document: {exc}"]
    name = _operation_name(document)
    schema = graphql_schema()
    problems = [f"GraphQL {name}: {e.message}" for e in graphql.validate(schema, document)]
    if problems:
        return problems
    variables = request.get("variables") or {}
    operation = next(
        d for d in document.definitions if isinstance(d, graphql.OperationDefinitionNode)
    )
    coerced = get_variable_values(schema, operation.variable_definitions or [], variables)
    if isinstance(coerced, list):
        return [f"GraphQL {name}: {e.message}" for e in coerced]
    for definition in operation.variable_definitions or []:
        kind = graphql.type_from_ast(schema, definition.type)
        value = coerced.get(definition.variable.name.value)
        problems += [f"GraphQL {name}: {p}" for p in _input_problems(kind, value)]
    if reply is not None and not problems:
        problems += [f"GraphQL {name}: {p}" for p in _answer_problems(document, variables, *reply)]
    return problems


def _operation_name(document: graphql.DocumentNode) -> str:
    for definition in document.definitions:
        if isinstance(definition, graphql.OperationDefinitionNode):
            return definition.name.value if definition.name else definition.operation.value
    return "document"


def _input_problems(kind: Any, value: Any) -> Iterator[str]:
    """Every ``INPUT_RULES`` violation in ``value``, an input of type ``kind``."""
    kind = graphql.get_nullable_type(kind)
    if value is None:
        return
    if isinstance(kind, graphql.GraphQLList):
        for item in value:
            yield from _input_problems(kind.of_type, item)
    elif isinstance(kind, graphql.GraphQLInputObjectType):
        for field_name, field in kind.fields.items():
            if field_name not in value:
                continue
            rule = INPUT_RULES.get(f"{kind.name}.{field_name}")
            if rule is not None:
                yield from rule.check(field.description, value[field_name])
            yield from _input_problems(field.type, value[field_name])


def _answer_problems(
    document: graphql.DocumentNode, variables: dict[str, Any], status: int, body: str
) -> list[str]:
    if status in _GRAPHQL_HTTP_REFUSALS or status >= _STATUS_UNCHECKED:
        return []
    if status != 200:
        return [f"the fake answered HTTP {status}; GitHub answers GraphQL errors with 200"]
    try:
        answer = json.loads(body)
    except ValueError:
        return ["the fake's answer is not JSON"]
    errors = answer.get("errors")
    if errors is not None and not (
        isinstance(errors, list) and all(isinstance(e, dict) and "message" in e for e in errors)
    ):
        return ["the fake's errors are not a list of objects with a message"]
    data = answer.get("data")
    if data is None:
        return [] if errors else ["the fake's answer has neither data nor errors"]
    result = graphql.execute_sync(
        graphql_schema(),
        document,
        root_value=data,
        variable_values=variables,
        field_resolver=_canned_field,
        type_resolver=_canned_type,
    )
    found = [f"the fake's data at {e.path}: {e.message}" for e in result.errors or []]
    if not found and errors is None and result.data != data:
        found.append(
            "the fake's data is not what the schema makes of it: a field the document did not "
            "ask for, or a __typename the field's type cannot have "
            f"({_first_difference(data, result.data)})"
        )
    if errors is not None:  # a field that failed is null in data, as GitHub answers
        found = [p for p in found if "Cannot return null" not in p]
    return found


def _first_difference(canned: Any, executed: Any, path: str = "") -> str:
    if isinstance(canned, dict) and isinstance(executed, dict):
        for key in canned:
            if key not in executed:
                return f"{path}/{key} not asked for"
            if canned[key] != executed[key]:
                return _first_difference(canned[key], executed[key], f"{path}/{key}")
    if isinstance(canned, list) and isinstance(executed, list):
        for index, (a, b) in enumerate(zip(canned, executed, strict=False)):
            if a != b:
                return _first_difference(a, b, f"{path}/{index}")
    given, expected = json.dumps(canned)[:80], json.dumps(executed)[:80]
    return f"{path or '/'}: {given} where the schema gives {expected}"


def _canned_field(source: Any, info: graphql.GraphQLResolveInfo, **_args: Any) -> Any:
    key = info.path.key
    if not isinstance(source, dict):
        raise graphql.GraphQLError(f"{info.parent_type.name} is not an object in the answer")
    if key not in source:
        raise graphql.GraphQLError(f"the answer lacks {key!r}, which the document asks for")
    return source[key]


def _canned_type(
    value: Any, info: graphql.GraphQLResolveInfo, abstract: graphql.GraphQLAbstractType
) -> str | None:
    """The concrete type of an interface or union value: its ``__typename``, else the first
    possible type that has every field the value holds."""
    if isinstance(value, dict) and "__typename" in value:
        return str(value["__typename"])
    keys = set(value) if isinstance(value, dict) else set()
    for possible in sorted(info.schema.get_possible_types(abstract), key=lambda t: t.name):
        if keys <= set(possible.fields):
            return possible.name
    return None


def check(method: str, url: str, body: str, reply: tuple[int, str] | None) -> list[str]:
    """The contract's verdict on one request to the API and the fake's answer."""
    path = urlsplit(url).path
    if re.fullmatch(r"(?:/api)?/graphql", path):
        return check_graphql(body, reply)
    return check_rest(method, url, body, reply)
