"""The wire models under the names the TypeScript client gives them (``Experiment``, ``RunConfig``,
``MetricPoint``, …): aliases of the generated ``assay.models``, whose names follow the operations."""

from __future__ import annotations

from .models import AddOrganizationMemberResponse as MemberAddition
from .models import (
    ApiKey,
    Asset,
    ExperimentSummary,
    Organization,
    Run,
    SearchResponse,
    SweepSummary,
    Variation,
)
from .models import CreateApiKeyResponse as CreatedApiKey
from .models import CreateAssetResponse1 as PresignedAsset
from .models import CreateExperimentResponse as Experiment
from .models import DownloadAssetResponse as AssetDownload
from .models import GetExperimentLineageResponse as LineageResponse
from .models import GetExperimentMetricSeriesResponse as ExperimentMetricSeries
from .models import GetExperimentMetricsResponse as ExperimentMetrics
from .models import GetExperimentResponse as ExperimentDetail
from .models import GetMeResponse as Me
from .models import GetMyScopesResponse as MyScopes
from .models import GetRunCheckpointResponse as Checkpoint
from .models import GetRunConfigResponse as RunConfig
from .models import GetRunMetricSeriesResponse as MetricSeries
from .models import GetSweepResponse as Sweep
from .models import ListExperimentMetricKeysResponse as ExperimentMetricKeys
from .models import ListOrganizationMembersResponseItemsItem as Member
from .models import ListRunMetricsResponse as RunMetricList
from .models import ListRunMetricsResponseItemsItem as MetricSummary
from .models import ListRunMetricsResponseItemsItemLast as MetricPoint
from .models import LogRunMetricsResponse as LogMetricsResult
from .models import ProvisionRunResponse as Provisioned
from .models import RunControlResponse as RunControl

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
