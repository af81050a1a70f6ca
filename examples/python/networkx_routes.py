"""Shortest paths with their routes on a networkx graph: ringmm.apsp solves every pair at once (a
min-plus Floyd–Warshall built on argmax products) and ringmm.route reads a route from the
successor matrix it returns. Needs networkx and scipy; tests/python/test_examples.py runs it."""
import networkx as nx
import numpy as np

import ringmm

# Driving times in minutes between Dutch cities; the ferry to Texel runs one way in this example.
roads = nx.DiGraph()
for a, b, minutes in [("Amsterdam", "Haarlem", 25), ("Amsterdam", "Utrecht", 40), ("Amsterdam", "Almere", 30),
                      ("Haarlem", "Leiden", 35), ("Leiden", "The Hague", 20), ("The Hague", "Rotterdam", 30),
                      ("Rotterdam", "Utrecht", 45), ("Utrecht", "Arnhem", 50), ("Utrecht", "Den Bosch", 45),
                      ("Den Bosch", "Eindhoven", 30), ("Eindhoven", "Maastricht", 70), ("Almere", "Zwolle", 55),
                      ("Zwolle", "Arnhem", 60), ("Amsterdam", "Den Helder", 70)]:
    roads.add_edge(a, b, minutes=minutes)
    roads.add_edge(b, a, minutes=minutes)
roads.add_edge("Den Helder", "Texel", minutes=20)

cities = list(roads)  # vertex i of the matrices below is cities[i]
# A scipy.sparse matrix: each stored entry is an edge; ringmm.apsp reads it as `ringmm apsp` reads a .mtx file.
weights = nx.to_scipy_sparse_array(roads, nodelist=cities, weight="minutes")
dist, successors = ringmm.apsp(weights)  # dist[i, j]: minutes; successors[i, j]: the city after i on the way to j

print(f"{len(cities)} cities, {roads.number_of_edges()} roads, on {ringmm.info()['default_backend']}")
for start, goal in [("Haarlem", "Maastricht"), ("Texel", "Zwolle"), ("Zwolle", "Texel"), ("Rotterdam", "Almere")]:
    i, j = cities.index(start), cities.index(goal)
    route = [cities[v] for v in ringmm.route(successors, i, j)]
    if not route:
        print(f"{start} -> {goal}: no route")
        assert not nx.has_path(roads, start, goal)
        continue
    print(f"{start} -> {goal}: {dist[i, j]:.0f} min via {' -> '.join(route)}")
    # networkx agrees on the length, and the route's roads add up to it.
    assert dist[i, j] == nx.shortest_path_length(roads, start, goal, weight="minutes")
    assert dist[i, j] == sum(roads[a][b]["minutes"] for a, b in zip(route, route[1:]))

# Every pair at once, checked against networkx's Dijkstra from every city.
lengths = dict(nx.all_pairs_dijkstra_path_length(roads, weight="minutes"))
want = np.array([[lengths[a].get(b, np.inf) for b in cities] for a in cities])
assert np.array_equal(dist, want)
print("all", len(cities) ** 2, "distances agree with networkx")
