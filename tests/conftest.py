import os
import sys

# tests/oracle.py and friends are imported as top-level helpers
sys.path.insert(0, os.path.dirname(__file__))
