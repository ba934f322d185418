"""Benchmarks that print haru's number beside an anchor's, measured in the same run.

`python -m bench.storage` compares the LMDB store (`storage/`) with a throwaway etcd 3.4
(`bench.etcd_anchor`). The private `bench._*` modules hold the shared pieces: the test object
(`_pod`), timing and percentiles (`_timing`), the shared report pieces (`_report`), one adapter per side
(`_haru_side`, `_etcd_side`) and the cases themselves (`_*_case(s)`).
"""
