"""The PodGroup scheduling cycle (KEP-4671, KEP-5732): a group placed as one entity.

`placement.py` is the placement loop: candidate domains from the placementGenerate plugins, the
group tried inside each, the best feasible one by the placementScore plugins. The cycle that pops
a group from the queue and commits or rejects it calls it.
"""
