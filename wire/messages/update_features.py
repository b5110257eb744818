"""UpdateFeatures (key 57): finalize feature levels (KIP-584; v1 upgrade types and
validate-only, KIP-778; v2 answers without per-feature results)."""

from wire.messages.common import error_fields, response_head
from wire.schema import BOOL, INT8, INT16, INT32, STRING, Array, Field, message

UPDATE_FEATURES_REQUEST = message("UpdateFeaturesRequest", 57, "0-2", "0+", [
    Field("timeout_ms", INT32, default=60000),
    Field("feature_updates", Array, fields=[
        Field("feature", STRING),
        Field("max_version_level", INT16),
        Field("allow_downgrade", BOOL, "0"),
        Field("upgrade_type", INT8, "1+", default=1),
    ]),
    Field("validate_only", BOOL, "1+"),
])

UPDATE_FEATURES_RESPONSE = message("UpdateFeaturesResponse", 57, "0-2", "0+", [
    *response_head(null_message=False),
    Field("results", Array, "0-1", fields=[
        Field("feature", STRING), *error_fields(null_message=False)]),
])
