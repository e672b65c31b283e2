"""The Spark types of the ``kafka-log`` rows: ``kdump.arrow.schema``'s Arrow layouts converted for Spark.

The Arrow schema is the source of truth (Spark checks every batch a Python data source yields against
``to_arrow_schema`` of the Spark schema it was given); the StructType here is derived from it field by
field, so that ``to_arrow_schema(spark_schema(level))`` is exactly ``arrow_schema(level)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from kdump.arrow.schema import TIMESTAMP, arrow_schema

if TYPE_CHECKING:
    from pyspark.sql.types import StructType


def spark_schema(level: str) -> StructType:
    """The Spark StructType of a level (imports pyspark)."""
    return spark_struct(arrow_schema(level))


def spark_struct(schema: pa.Schema) -> StructType:
    """The Spark StructType whose ``to_arrow_schema`` is exactly ``schema`` (for the types used here)."""
    from pyspark.sql.types import StructField, StructType

    return StructType([StructField(f.name, _spark_type(f.type), f.nullable) for f in schema])


def _spark_type(t: pa.DataType) -> Any:
    from pyspark.sql import types as st

    simple = {pa.string(): st.StringType(), pa.int32(): st.IntegerType(), pa.int64(): st.LongType(),
              pa.binary(): st.BinaryType(), pa.bool_(): st.BooleanType(), TIMESTAMP: st.TimestampType()}
    if t in simple:
        return simple[t]
    if pa.types.is_list(t):
        return st.ArrayType(_spark_type(t.value_type), t.value_field.nullable)
    if pa.types.is_struct(t):
        return st.StructType([st.StructField(f.name, _spark_type(f.type), f.nullable) for f in t])
    raise TypeError(f"no Spark type for Arrow {t}")
