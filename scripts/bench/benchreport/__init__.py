# SPDX-License-Identifier: GPL-2.0
"""The sections of make bench's report (scripts/bench/bench_report.py)."""
