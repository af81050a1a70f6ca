"""ringmm from Python: shortest paths of at most two edges, one min-plus product.
scripts/run.sh runs this after the C++ demo."""
import numpy as np

import ringmm

inf = np.inf
d = np.array([[0, 4, inf], [inf, 0, 1], [2, inf, 0]], np.float32)  # d[i, j]: length of the edge i -> j
info = ringmm.info()
print(f"ringmm {ringmm.__version__} from Python, on {info['default_backend']}")
print("shortest paths of at most two edges, ringmm.matmul(d, d, 'min_plus'):")
print(ringmm.matmul(d, d, "min_plus"))  # [[0 4 5] [3 0 1] [2 6 0]]
