"""failOnDataLoss after DeleteRecords or retention removes records a query needs."""

from __future__ import annotations

import pytest

from spark_validation.jobs import data_loss


@pytest.mark.parametrize("removal", data_loss.REMOVALS)
def test_fail_on_data_loss(spark, cluster, work, removal):
    s = data_loss.run(spark, cluster, work, removal)
    assert s["log_start_offsets"] == {0: data_loss.LOST_UP_TO, 1: 0}
    assert s["rows"] == 10 + 5 + 25
