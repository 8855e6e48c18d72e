"""The wire models under the names the TypeScript client gives them (``Experiment``, ``RunConfig``,
``MetricPoint``, …): aliases of the generated ``assay.models``, whose names follow the operations."""

from __future__ import annotations

from ._models import AddOrganizationMemberResponse as MemberAddition
from ._models import (
    ApiKey,
    Asset,
    ExperimentSummary,
    Organization,
    Run,
    SearchResponse,
    SweepSummary,
    Variation,
)
from ._models import CreateApiKeyResponse as CreatedApiKey
from ._models import CreateAssetResponse1 as PresignedAsset
from ._models import CreateExperimentResponse as Experiment
from ._models import DownloadAssetResponse as AssetDownload
from ._models import GetExperimentLineageResponse as LineageResponse
from ._models import GetExperimentMetricSeriesResponse as ExperimentMetricSeries
from ._models import GetExperimentMetricsResponse as ExperimentMetrics
from ._models import GetExperimentResponse as ExperimentDetail
from ._models import GetMeResponse as Me
from ._models import GetMyScopesResponse as MyScopes
from ._models import GetRunCheckpointResponse as Checkpoint
from ._models import GetRunConfigResponse as RunConfig
from ._models import GetRunMetricSeriesResponse as MetricSeries
from ._models import GetSweepResponse as Sweep
from ._models import ListExperimentMetricKeysResponse as ExperimentMetricKeys
from ._models import ListOrganizationMembersResponseItemsItem as Member
from ._models import ListRunMetricsResponse as RunMetricList
from ._models import ListRunMetricsResponseItemsItem as MetricSummary
from ._models import ListRunMetricsResponseItemsItemLast as MetricPoint
from ._models import LogRunMetricsResponse as LogMetricsResult
from ._models import ProvisionRunResponse as Provisioned
from ._models import RunControlResponse as RunControl

__all__ = [
    "ApiKey",
    "Asset",
    "AssetDownload",
    "Checkpoint",
    "CreatedApiKey",
    "Experiment",
    "ExperimentDetail",
    "ExperimentMetricKeys",
    "ExperimentMetricSeries",
    "ExperimentMetrics",
    "ExperimentSummary",
    "LineageResponse",
    "LogMetricsResult",
    "Me",
    "Member",
    "MemberAddition",
    "MetricPoint",
    "MetricSeries",
    "MetricSummary",
    "MyScopes",
    "Organization",
    "PresignedAsset",
    "Provisioned",
    "Run",
    "RunConfig",
    "RunControl",
    "RunMetricList",
    "SearchResponse",
    "Sweep",
    "SweepSummary",
    "Variation",
]
