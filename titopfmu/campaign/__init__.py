"""Campaigns: Monte-Carlo runs and parameter sweeps of one model, serially or on Dask (a
``LocalCluster`` by default, any scheduler by address), with results as Parquet, summary
statistics and plots, failed runs recorded, and resumption after an interruption.

>>> from titopfmu.campaign import Campaign
>>> res = Campaign("balloon", {"pend1.mass": "normal(2, 0.1)"}, samples=100,
...                out="runs/b", t_final=5.0, seed=1).run()
>>> res.table, res.summary(), res.plot()

Running on Dask and writing Parquet need the ``campaign`` extra
(``pip install 'titopfmu[campaign]'``). See ``docs/campaigns.md``.
"""

from .campaign import CONNECT_TIMEOUT, Campaign, CampaignInterrupted, run_campaign
from .distributions import (
    DistributionError,
    LogNormal,
    Normal,
    TruncNormal,
    Uniform,
    Values,
    parse_distribution,
)
from .results import CampaignResult
from .runs import REDUCTIONS
from .store import CampaignError

__all__ = [
    "CONNECT_TIMEOUT",
    "Campaign",
    "CampaignError",
    "CampaignInterrupted",
    "CampaignResult",
    "DistributionError",
    "LogNormal",
    "Normal",
    "REDUCTIONS",
    "TruncNormal",
    "Uniform",
    "Values",
    "parse_distribution",
    "run_campaign",
]
