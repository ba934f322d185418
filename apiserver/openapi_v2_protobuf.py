"""The protobuf form of `/openapi/v2`: gnostic's `openapi.v2.Document`, which client-go asks for.

Owns the message descriptors (built here from a table: gnostic numbers every message's fields
1, 2, 3… in declaration order, so a field list is enough) and `encode()`, which turns a Swagger 2.0
JSON document into that message the way gnostic's `ParseDocument` does: `x-` keys become
`NamedAny` vendor extensions, parameters and responses split into their `oneof` arms by `in`,
`$ref` and `type`, and every free-form value (`default`, `example`, `enum`, extensions) is an
`Any` whose `yaml` holds it as JSON text, which is YAML. `openapi_v2.py` calls `encode()`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import msgspec
from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import Message

PACKAGE = "openapi.v2"

# Field lists: `name` is a string, `name:T` a message or scalar of type T, `*` repeated.
# Messages in `_ONEOF` hold their fields in one oneof named `oneof`.
_VALIDATION = ("type format items:PrimitivesItems collection_format default:Any maximum:double "
               "exclusive_maximum:bool minimum:double exclusive_minimum:bool max_length:int64 min_length:int64 "
               "pattern max_items:int64 min_items:int64 unique_items:bool *enum:Any multiple_of:double")
_PARAMETER_HEAD = "required:bool in description name"
_MESSAGES: dict[str, str] = {
    "AdditionalPropertiesItem": "schema:Schema boolean:bool",
    "Any": "value:google.protobuf.Any yaml",
    "ApiKeySecurity": "type name in description *vendor_extension:NamedAny",
    "BasicAuthenticationSecurity": "type description *vendor_extension:NamedAny",
    "BodyParameter": "description name in required:bool schema:Schema *vendor_extension:NamedAny",
    "Contact": "name url email *vendor_extension:NamedAny",
    "Default": "*additional_properties:NamedAny",
    "Definitions": "*additional_properties:NamedSchema",
    "Document": "swagger info:Info host base_path *schemes *consumes *produces paths:Paths "
                "definitions:Definitions parameters:ParameterDefinitions responses:ResponseDefinitions "
                "*security:SecurityRequirement security_definitions:SecurityDefinitions *tags:Tag "
                "external_docs:ExternalDocs *vendor_extension:NamedAny",
    "Examples": "*additional_properties:NamedAny",
    "ExternalDocs": "description url *vendor_extension:NamedAny",
    "FileSchema": "format title description default:Any *required type read_only:bool external_docs:ExternalDocs "
                  "example:Any *vendor_extension:NamedAny",
    "FormDataParameterSubSchema": f"{_PARAMETER_HEAD} allow_empty_value:bool {_VALIDATION} *vendor_extension:NamedAny",
    "Header": f"{_VALIDATION} description *vendor_extension:NamedAny",
    "HeaderParameterSubSchema": f"{_PARAMETER_HEAD} {_VALIDATION} *vendor_extension:NamedAny",
    "Headers": "*additional_properties:NamedHeader",
    "Info": "title version description terms_of_service contact:Contact license:License *vendor_extension:NamedAny",
    "ItemsItem": "*schema:Schema",
    "JsonReference": "_ref description",
    "License": "name url *vendor_extension:NamedAny",
    "NamedAny": "name value:Any",
    "NamedHeader": "name value:Header",
    "NamedParameter": "name value:Parameter",
    "NamedPathItem": "name value:PathItem",
    "NamedResponse": "name value:Response",
    "NamedResponseValue": "name value:ResponseValue",
    "NamedSchema": "name value:Schema",
    "NamedSecurityDefinitionsItem": "name value:SecurityDefinitionsItem",
    "NamedString": "name value",
    "NamedStringArray": "name value:StringArray",
    "NonBodyParameter": "header_parameter_sub_schema:HeaderParameterSubSchema "
                        "form_data_parameter_sub_schema:FormDataParameterSubSchema "
                        "query_parameter_sub_schema:QueryParameterSubSchema "
                        "path_parameter_sub_schema:PathParameterSubSchema",
    "Oauth2AccessCodeSecurity": "type flow scopes:Oauth2Scopes authorization_url token_url description "
                                "*vendor_extension:NamedAny",
    "Oauth2ApplicationSecurity": "type flow scopes:Oauth2Scopes token_url description *vendor_extension:NamedAny",
    "Oauth2ImplicitSecurity": "type flow scopes:Oauth2Scopes authorization_url description *vendor_extension:NamedAny",
    "Oauth2PasswordSecurity": "type flow scopes:Oauth2Scopes token_url description *vendor_extension:NamedAny",
    "Oauth2Scopes": "*additional_properties:NamedString",
    "Operation": "*tags summary description external_docs:ExternalDocs operation_id *produces *consumes "
                 "*parameters:ParametersItem responses:Responses *schemes deprecated:bool "
                 "*security:SecurityRequirement *vendor_extension:NamedAny",
    "Parameter": "body_parameter:BodyParameter non_body_parameter:NonBodyParameter",
    "ParameterDefinitions": "*additional_properties:NamedParameter",
    "ParametersItem": "parameter:Parameter json_reference:JsonReference",
    "PathItem": "_ref get:Operation put:Operation post:Operation delete:Operation options:Operation "
                "head:Operation patch:Operation *parameters:ParametersItem *vendor_extension:NamedAny",
    "PathParameterSubSchema": f"{_PARAMETER_HEAD} {_VALIDATION} *vendor_extension:NamedAny",
    "Paths": "*vendor_extension:NamedAny *path:NamedPathItem",
    "PrimitivesItems": f"{_VALIDATION} *vendor_extension:NamedAny",
    "Properties": "*additional_properties:NamedSchema",
    "QueryParameterSubSchema": f"{_PARAMETER_HEAD} allow_empty_value:bool {_VALIDATION} *vendor_extension:NamedAny",
    "Response": "description schema:SchemaItem headers:Headers examples:Examples *vendor_extension:NamedAny",
    "ResponseDefinitions": "*additional_properties:NamedResponse",
    "ResponseValue": "response:Response json_reference:JsonReference",
    "Responses": "*response_code:NamedResponseValue *vendor_extension:NamedAny",
    "Schema": "_ref format title description default:Any multiple_of:double maximum:double exclusive_maximum:bool "
              "minimum:double exclusive_minimum:bool max_length:int64 min_length:int64 pattern max_items:int64 "
              "min_items:int64 unique_items:bool max_properties:int64 min_properties:int64 *required *enum:Any "
              "additional_properties:AdditionalPropertiesItem type:TypeItem items:ItemsItem *all_of:Schema "
              "properties:Properties discriminator read_only:bool xml:Xml external_docs:ExternalDocs example:Any "
              "*vendor_extension:NamedAny",
    "SchemaItem": "schema:Schema file_schema:FileSchema",
    "SecurityDefinitions": "*additional_properties:NamedSecurityDefinitionsItem",
    "SecurityDefinitionsItem": "basic_authentication_security:BasicAuthenticationSecurity "
                               "api_key_security:ApiKeySecurity oauth2_implicit_security:Oauth2ImplicitSecurity "
                               "oauth2_password_security:Oauth2PasswordSecurity "
                               "oauth2_application_security:Oauth2ApplicationSecurity "
                               "oauth2_access_code_security:Oauth2AccessCodeSecurity",
    "SecurityRequirement": "*additional_properties:NamedStringArray",
    "StringArray": "*value",
    "Tag": "name description external_docs:ExternalDocs *vendor_extension:NamedAny",
    "TypeItem": "*value",
    "VendorExtension": "*additional_properties:NamedAny",
    "Xml": "name namespace prefix attribute:bool wrapped:bool *vendor_extension:NamedAny",
}
_ONEOF = frozenset({"AdditionalPropertiesItem", "NonBodyParameter", "Parameter", "ParametersItem", "ResponseValue",
                    "SchemaItem", "SecurityDefinitionsItem"})
_FD = descriptor_pb2.FieldDescriptorProto
_SCALARS = {"string": _FD.TYPE_STRING, "bool": _FD.TYPE_BOOL, "double": _FD.TYPE_DOUBLE, "int64": _FD.TYPE_INT64}


def _file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto(name="openapiv2/OpenAPIv2.proto", package=PACKAGE, syntax="proto3",
                                               dependency=["google/protobuf/any.proto"])
    for name, fields in _MESSAGES.items():
        message = proto.message_type.add(name=name)
        if name in _ONEOF:
            message.oneof_decl.add(name="oneof")
        for number, spec in enumerate(fields.split(), start=1):
            repeated = spec.startswith("*")
            field_name, _, type_name = spec.lstrip("*").partition(":")
            field = message.field.add(name=field_name, number=number,
                                      label=_FD.LABEL_REPEATED if repeated else _FD.LABEL_OPTIONAL)
            type_name = type_name or "string"
            if type_name in _SCALARS:
                field.type = _SCALARS[type_name]
            else:
                field.type = _FD.TYPE_MESSAGE
                field.type_name = "." + (type_name if "." in type_name else f"{PACKAGE}.{type_name}")
            if name in _ONEOF:
                field.oneof_index = 0
    return proto


@functools.cache
def _classes() -> dict[str, type[Message]]:
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(any_pb2.DESCRIPTOR.serialized_pb)
    pool.Add(_file_descriptor())
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{PACKAGE}.{name}"))
            for name in _MESSAGES}


def message_class(name: str) -> type[Message]:
    """The class of one gnostic message, e.g. `message_class("Document")` to decode a body."""
    return _classes()[name]


def encode(document: Mapping[str, Any]) -> bytes:
    """The serialized `openapi.v2.Document` of a Swagger 2.0 JSON document."""
    doc = message_class("Document")()
    _fill(doc, document, _DOCUMENT)
    return doc.SerializeToString()


# -- JSON → message ------------------------------------------------------------------------
# Each table maps a JSON key to (proto field, how to fill it). Keys not in a table are errors:
# gnostic refuses them too, so a document that encodes here is one client-go can read.
_ENCODER = msgspec.json.Encoder()


def _yaml(msg: Any, value: Any) -> None:
    msg.yaml = _ENCODER.encode(value).decode()


def _fill(msg: Any, node: Mapping[str, Any], table: Mapping[str, tuple[str, Any]]) -> None:
    for key, value in node.items():
        if key.startswith("x-"):
            ext = msg.vendor_extension.add(name=key)
            _yaml(ext.value, value)
            continue
        try:
            field, how = table[key]
        except KeyError:
            raise ValueError(f"{key!r} is not a valid property of {type(msg).__name__}") from None
        how(msg, field, value)


def _set(msg: Any, field: str, value: Any) -> None:
    try:
        setattr(msg, field, value)
    except TypeError:
        # A JSON number can reach an int64 field as 5.0; anything else is not gnostic's shape.
        kind = msg.DESCRIPTOR.fields_by_name[field].type
        if not (kind == _FD.TYPE_INT64 and isinstance(value, float) and value.is_integer()):
            raise ValueError(f"{value!r} is not a valid {field} of {type(msg).__name__}") from None
        setattr(msg, field, int(value))


def _strings(msg: Any, field: str, value: Any) -> None:
    getattr(msg, field).extend(value)


def _any(msg: Any, field: str, value: Any) -> None:
    _yaml(getattr(msg, field), value)


def _anys(msg: Any, field: str, value: Any) -> None:
    repeated = getattr(msg, field)
    for item in value:
        _yaml(repeated.add(), item)


def _sub(table: Mapping[str, tuple[str, Any]]) -> Any:
    def fill(msg: Any, field: str, value: Any) -> None:
        _fill(getattr(msg, field), value, table)
    return fill


def _named(table: Mapping[str, tuple[str, Any]] | None, fill_value: Any = None, repeated: str = "additional_properties"
           ) -> Any:
    """A JSON object of named values: `additional_properties` (or `repeated`) entries of {name, value}."""
    def fill(msg: Any, field: str, value: Any) -> None:
        entries = getattr(getattr(msg, field), repeated)
        for name, item in value.items():
            entry = entries.add(name=name)
            if fill_value is not None:
                fill_value(entry.value, item)
            elif table is not None:
                _fill(entry.value, item, table)
    return fill


def _schema(msg: Any, node: Mapping[str, Any]) -> None:
    _fill(msg, node, _SCHEMA)


def _schema_field(msg: Any, field: str, value: Any) -> None:
    _schema(getattr(msg, field), value)


def _schemas(msg: Any, field: str, value: Any) -> None:
    repeated = getattr(msg, field)
    for item in value:
        _schema(repeated.add(), item)


def _type(msg: Any, field: str, value: Any) -> None:
    msg.type.value.extend([value] if isinstance(value, str) else value)


def _items(msg: Any, field: str, value: Any) -> None:
    repeated = msg.items.schema
    for item in (value if isinstance(value, list) else [value]):
        _schema(repeated.add(), item)


def _additional(msg: Any, field: str, value: Any) -> None:
    if isinstance(value, bool):
        msg.additional_properties.boolean = value
    else:
        _schema(msg.additional_properties.schema, value)


def _parameter(msg: Any, node: Mapping[str, Any]) -> None:
    where = node.get("in")
    if where == "body":
        _fill(msg.body_parameter, node, _BODY_PARAMETER)
        return
    arm = {"query": "query_parameter_sub_schema", "path": "path_parameter_sub_schema",
           "header": "header_parameter_sub_schema", "formData": "form_data_parameter_sub_schema"}.get(where or "")
    if arm is None:
        raise ValueError(f"a parameter must be in body, query, path, header or formData, not {where!r}")
    table = _QUERY_PARAMETER if arm in ("query_parameter_sub_schema", "form_data_parameter_sub_schema") \
        else _PATH_PARAMETER
    _fill(getattr(msg.non_body_parameter, arm), node, table)


def _parameters(msg: Any, field: str, value: Any) -> None:
    repeated = getattr(msg, field)
    for node in value:
        item = repeated.add()
        if "$ref" in node:
            _fill(item.json_reference, node, _JSON_REFERENCE)
        else:
            _parameter(item.parameter, node)


def _response_value(msg: Any, node: Mapping[str, Any]) -> None:
    if "$ref" in node:
        _fill(msg.json_reference, node, _JSON_REFERENCE)
    else:
        _fill(msg.response, node, _RESPONSE)


def _response_schema(msg: Any, field: str, value: Any) -> None:
    if value.get("type") == "file":
        _fill(msg.schema.file_schema, value, _FILE_SCHEMA)
    else:
        _schema(msg.schema.schema, value)


def _responses(msg: Any, field: str, value: Any) -> None:
    responses = msg.responses
    for code, node in value.items():
        if code.startswith("x-"):
            _yaml(responses.vendor_extension.add(name=code).value, node)
        else:
            _response_value(responses.response_code.add(name=code).value, node)


def _paths(msg: Any, field: str, value: Any) -> None:
    paths = msg.paths
    for path, node in value.items():
        if path.startswith("x-"):
            _yaml(paths.vendor_extension.add(name=path).value, node)
        else:
            _fill(paths.path.add(name=path).value, node, _PATH_ITEM)


def _security_definition(msg: Any, node: Mapping[str, Any]) -> None:
    kind = node.get("type")
    if kind == "apiKey":
        _fill(msg.api_key_security, node, _plain("type", "name", "in", "description"))
    elif kind == "basic":
        _fill(msg.basic_authentication_security, node, _plain("type", "description"))
    else:
        raise ValueError(f"unsupported security definition type {kind!r}")


def _security(msg: Any, field: str, value: Any) -> None:
    repeated = getattr(msg, field)
    for requirement in value:
        entries = repeated.add().additional_properties
        for name, scopes in requirement.items():
            entries.add(name=name).value.value.extend(scopes)


def _plain(*names: str, **renamed: str) -> dict[str, tuple[str, Any]]:
    table = {name: (name, _set) for name in names}
    table.update({json_name: (field, _set) for json_name, field in renamed.items()})
    return table


_VALIDATION_KEYS: dict[str, tuple[str, Any]] = {
    **_plain("type", "format", "maximum", "minimum", "pattern", collectionFormat="collection_format",
             exclusiveMaximum="exclusive_maximum", exclusiveMinimum="exclusive_minimum", maxLength="max_length",
             minLength="min_length", maxItems="max_items", minItems="min_items", uniqueItems="unique_items",
             multipleOf="multiple_of"),
    "default": ("default", _any),
    "enum": ("enum", _anys),
}
_PRIMITIVES_ITEMS: dict[str, tuple[str, Any]] = dict(_VALIDATION_KEYS)
_PRIMITIVES_ITEMS["items"] = ("items", _sub(_PRIMITIVES_ITEMS))
_PATH_PARAMETER = {**_plain("required", "in", "description", "name"), **_PRIMITIVES_ITEMS}
_QUERY_PARAMETER = {**_PATH_PARAMETER, **_plain(allowEmptyValue="allow_empty_value")}
_JSON_REFERENCE = _plain("description", **{"$ref": "_ref"})
_EXTERNAL_DOCS = _plain("description", "url")
_XML = _plain("name", "namespace", "prefix", "attribute", "wrapped")
_SCHEMA: dict[str, tuple[str, Any]] = {
    **_plain("format", "title", "description", "maximum", "minimum", "pattern", "discriminator",
             **{"$ref": "_ref"}, multipleOf="multiple_of", exclusiveMaximum="exclusive_maximum",
             exclusiveMinimum="exclusive_minimum", maxLength="max_length", minLength="min_length",
             maxItems="max_items", minItems="min_items", uniqueItems="unique_items",
             maxProperties="max_properties", minProperties="min_properties", readOnly="read_only"),
    "required": ("required", _strings),
    "default": ("default", _any),
    "example": ("example", _any),
    "enum": ("enum", _anys),
    "type": ("type", _type),
    "items": ("items", _items),
    "allOf": ("all_of", _schemas),
    "additionalProperties": ("additional_properties", _additional),
    "properties": ("properties", _named(None, _schema)),
    "xml": ("xml", _sub(_XML)),
    "externalDocs": ("external_docs", _sub(_EXTERNAL_DOCS)),
}
_FILE_SCHEMA: dict[str, tuple[str, Any]] = {
    **_plain("format", "title", "description", "type", readOnly="read_only"),
    "required": ("required", _strings), "default": ("default", _any), "example": ("example", _any),
    "externalDocs": ("external_docs", _sub(_EXTERNAL_DOCS)),
}
_BODY_PARAMETER = {**_plain("description", "name", "in", "required"), "schema": ("schema", _schema_field)}
_RESPONSE: dict[str, tuple[str, Any]] = {
    **_plain("description"),
    "schema": ("schema", _response_schema),
    "headers": ("headers", _named(_PRIMITIVES_ITEMS | _plain("description"))),
    "examples": ("examples", _named(None, _yaml)),
}
_TAG = {**_plain("name", "description"), "externalDocs": ("external_docs", _sub(_EXTERNAL_DOCS))}


def _tag_list(msg: Any, field: str, value: Any) -> None:
    repeated = getattr(msg, field)
    for tag in value:
        _fill(repeated.add(), tag, _TAG)


_OPERATION: dict[str, tuple[str, Any]] = {
    **_plain("summary", "description", "deprecated", operationId="operation_id"),
    "tags": ("tags", _strings), "produces": ("produces", _strings), "consumes": ("consumes", _strings),
    "schemes": ("schemes", _strings), "externalDocs": ("external_docs", _sub(_EXTERNAL_DOCS)),
    "parameters": ("parameters", _parameters), "responses": ("responses", _responses),
    "security": ("security", _security),
}
_PATH_ITEM: dict[str, tuple[str, Any]] = {
    **{method: (method, _sub(_OPERATION)) for method in ("get", "put", "post", "delete", "options", "head", "patch")},
    "$ref": ("_ref", _set),
    "parameters": ("parameters", _parameters),
}
_DOCUMENT: dict[str, tuple[str, Any]] = {
    **_plain("swagger", "host", basePath="base_path"),
    "info": ("info", _sub({**_plain("title", "version", "description", termsOfService="terms_of_service"),
                           "contact": ("contact", _sub(_plain("name", "url", "email"))),
                           "license": ("license", _sub(_plain("name", "url")))})),
    "schemes": ("schemes", _strings), "consumes": ("consumes", _strings), "produces": ("produces", _strings),
    "paths": ("paths", _paths),
    "definitions": ("definitions", _named(None, _schema)),
    "parameters": ("parameters", _named(None, _parameter)),
    "responses": ("responses", _named(_RESPONSE)),
    "security": ("security", _security),
    "securityDefinitions": ("security_definitions", _named(None, _security_definition)),
    "tags": ("tags", _tag_list),
    "externalDocs": ("external_docs", _sub(_EXTERNAL_DOCS)),
}
