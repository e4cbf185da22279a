"""The parts of ``benchmarks/throughput.py``: workloads, drivers, counters, peers and the report."""
