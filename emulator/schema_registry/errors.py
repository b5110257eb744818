"""The schema registry's errors: Confluent's HTTP statuses, error codes and messages.

A client tells failures apart by ``error_code`` (confluent-kafka's SchemaRegistryError,
the Java client's RestClientException), so every refusal carries the code Confluent's
registry gives for it and a message in its words. The body is always
``{"error_code": N, "message": "..."}``.
"""

from __future__ import annotations

SUBJECT_NOT_FOUND = 40401
VERSION_NOT_FOUND = 40402
SCHEMA_NOT_FOUND = 40403
SUBJECT_SOFT_DELETED = 40404
SUBJECT_NOT_SOFT_DELETED = 40405
SCHEMAVERSION_SOFT_DELETED = 40406
SCHEMAVERSION_NOT_SOFT_DELETED = 40407
SUBJECT_COMPATIBILITY_NOT_CONFIGURED = 40408
SUBJECT_MODE_NOT_CONFIGURED = 40409
INCOMPATIBLE_SCHEMA = 409
INVALID_SCHEMA = 42201
INVALID_VERSION = 42202
INVALID_COMPATIBILITY_LEVEL = 42203
INVALID_MODE = 42204
OPERATION_NOT_PERMITTED = 42205
REFERENCE_EXISTS = 42206
ID_DOES_NOT_MATCH = 42207
STORE_ERROR = 50001
UNPROCESSABLE = 422


class RegistryError(Exception):
    """A refusal: HTTP ``status`` with Confluent's ``error_code`` and message."""

    def __init__(self, status: int, error_code: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.message = message

    def body(self) -> dict:
        return {"error_code": self.error_code, "message": self.message}


def subject_not_found(subject: str) -> RegistryError:
    return RegistryError(404, SUBJECT_NOT_FOUND, f"Subject '{subject}' not found.")


def version_not_found(version: object) -> RegistryError:
    return RegistryError(404, VERSION_NOT_FOUND, f"Version {version} not found.")


def schema_not_found(schema_id: object = None) -> RegistryError:
    text = "Schema not found" if schema_id is None else f"Schema {schema_id} not found"
    return RegistryError(404, SCHEMA_NOT_FOUND, text)


def subject_soft_deleted(subject: str) -> RegistryError:
    return RegistryError(404, SUBJECT_SOFT_DELETED,
                         f"Subject '{subject}' was soft deleted.Set permanent=true to delete "
                         "permanently")


def subject_not_soft_deleted(subject: str) -> RegistryError:
    return RegistryError(404, SUBJECT_NOT_SOFT_DELETED,
                         f"Subject '{subject}' was not deleted first before being permanently "
                         "deleted")


def version_soft_deleted(subject: str, version: int) -> RegistryError:
    return RegistryError(404, SCHEMAVERSION_SOFT_DELETED,
                         f"Subject '{subject}' Version {version} was soft deleted.Set "
                         "permanent=true to delete permanently")


def version_not_soft_deleted(subject: str, version: int) -> RegistryError:
    return RegistryError(404, SCHEMAVERSION_NOT_SOFT_DELETED,
                         f"Subject '{subject}' Version {version} was not deleted first before "
                         "being permanently deleted")


def compatibility_not_configured(subject: str) -> RegistryError:
    return RegistryError(404, SUBJECT_COMPATIBILITY_NOT_CONFIGURED,
                         f"Subject '{subject}' does not have subject-level compatibility "
                         "configured")


def mode_not_configured(subject: str) -> RegistryError:
    return RegistryError(404, SUBJECT_MODE_NOT_CONFIGURED,
                         f"Subject '{subject}' does not have subject-level mode configured")


def invalid_schema(detail: str) -> RegistryError:
    return RegistryError(422, INVALID_SCHEMA, f"Invalid schema {detail}")


def invalid_version(version: object) -> RegistryError:
    return RegistryError(422, INVALID_VERSION,
                         f"The specified version '{version}' is not a valid version id. "
                         "Allowed values are between [1, 2^31-1] and the string \"latest\"")


def invalid_compatibility(level: object) -> RegistryError:
    return RegistryError(422, INVALID_COMPATIBILITY_LEVEL,
                         f"Invalid compatibility level {level!r}. Valid values are none, "
                         "backward, forward, full, backward_transitive, forward_transitive, "
                         "and full_transitive")


def invalid_mode(mode: object) -> RegistryError:
    return RegistryError(422, INVALID_MODE,
                         f"Invalid mode {mode!r}. Valid values are READWRITE, READONLY, "
                         "READONLY_OVERRIDE and IMPORT")


def not_permitted(message: str) -> RegistryError:
    return RegistryError(422, OPERATION_NOT_PERMITTED, message)


def reference_exists(message: str) -> RegistryError:
    return RegistryError(422, REFERENCE_EXISTS, message)


def store_error(message: str) -> RegistryError:
    return RegistryError(500, STORE_ERROR, message)


def bad_request(message: str) -> RegistryError:
    """A body the API cannot read (Confluent answers its JSON mapping errors so)."""
    return RegistryError(400, 400, message)
