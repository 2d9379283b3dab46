// Successive shortest paths (Bellman-Ford, since costs are negated values) on
// source -> class (capacity count) -> slot (capacity 1, cost -value) -> sink (capacity 1). Augmenting
// stops when the cheapest path no longer lowers the cost, which gives the largest total value rather than
// the largest number of placements: values already rank "more jobs" above "better jobs" where that matters.
#include "gpu/assignment.h"

#include <algorithm>
#include <limits>

#include "core/error.h"

namespace ragmig::gpu {
namespace {

struct Edge {
  int to;
  int cap;
  int64_t cost;
};

class Flow {
 public:
  explicit Flow(int nodes) : adj_(static_cast<size_t>(nodes)) {}
  int add(int from, int to, int cap, int64_t cost) {
    edges_.push_back({to, cap, cost});
    adj_[static_cast<size_t>(from)].push_back(static_cast<int>(edges_.size()) - 1);
    edges_.push_back({from, 0, -cost});
    adj_[static_cast<size_t>(to)].push_back(static_cast<int>(edges_.size()) - 1);
    return static_cast<int>(edges_.size()) - 2;
  }
  // Augments along cheapest paths while they have negative cost.
  void run(int source, int sink) {
    const size_t n = adj_.size();
    const int64_t inf = std::numeric_limits<int64_t>::max() / 4;
    for (;;) {
      std::vector<int64_t> dist(n, inf);
      std::vector<int> via(n, -1);
      dist[static_cast<size_t>(source)] = 0;
      for (size_t round = 0; round < n; ++round) {
        bool changed = false;
        for (size_t u = 0; u < n; ++u) {
          if (dist[u] == inf) continue;
          for (int e : adj_[u]) {
            const Edge& ed = edges_[static_cast<size_t>(e)];
            if (ed.cap > 0 && dist[u] + ed.cost < dist[static_cast<size_t>(ed.to)]) {
              dist[static_cast<size_t>(ed.to)] = dist[u] + ed.cost;
              via[static_cast<size_t>(ed.to)] = e;
              changed = true;
            }
          }
        }
        if (!changed) break;
      }
      if (dist[static_cast<size_t>(sink)] >= 0) return;  // no path, or no path that adds value
      for (int v = sink; v != source;) {
        const int e = via[static_cast<size_t>(v)];
        edges_[static_cast<size_t>(e)].cap -= 1;
        edges_[static_cast<size_t>(e ^ 1)].cap += 1;
        v = edges_[static_cast<size_t>(e ^ 1)].to;
      }
    }
  }
  int flow_on(int edge) const { return edges_[static_cast<size_t>(edge ^ 1)].cap; }

 private:
  std::vector<Edge> edges_;
  std::vector<std::vector<int>> adj_;
};

}  // namespace

std::vector<int> best_assignment(const std::vector<std::vector<int64_t>>& value, const std::vector<int>& count) {
  RAGMIG_CHECK(value.size() == count.size(), "one count per class");
  const int classes = static_cast<int>(value.size());
  const int slots = classes == 0 ? 0 : static_cast<int>(value[0].size());
  const int source = 0;
  const int sink = 1 + classes + slots;
  Flow flow(sink + 1);
  std::vector<std::vector<int>> edge_of(static_cast<size_t>(classes), std::vector<int>(static_cast<size_t>(slots), -1));
  for (int c = 0; c < classes; ++c) {
    RAGMIG_CHECK(static_cast<int>(value[static_cast<size_t>(c)].size()) == slots, "value rows of equal length");
    if (count[static_cast<size_t>(c)] > 0) flow.add(source, 1 + c, count[static_cast<size_t>(c)], 0);
    for (int s = 0; s < slots; ++s) {
      const int64_t v = value[static_cast<size_t>(c)][static_cast<size_t>(s)];
      if (v > 0) edge_of[static_cast<size_t>(c)][static_cast<size_t>(s)] = flow.add(1 + c, 1 + classes + s, 1, -v);
    }
  }
  for (int s = 0; s < slots; ++s) flow.add(1 + classes + s, sink, 1, 0);
  flow.run(source, sink);

  std::vector<int> slot_class(static_cast<size_t>(slots), -1);
  for (int c = 0; c < classes; ++c) {
    for (int s = 0; s < slots; ++s) {
      const int e = edge_of[static_cast<size_t>(c)][static_cast<size_t>(s)];
      if (e >= 0 && flow.flow_on(e) > 0) slot_class[static_cast<size_t>(s)] = c;
    }
  }
  return slot_class;
}

std::vector<int> best_assignment_brute_force(const std::vector<std::vector<int64_t>>& value,
                                             const std::vector<int>& count) {
  const size_t classes = value.size();
  const size_t slots = classes == 0 ? 0 : value[0].size();
  std::vector<int> current(slots, -1);
  std::vector<int> best = current;
  int64_t best_value = 0;
  std::vector<int> left = count;
  auto visit = [&](auto&& self, size_t s, int64_t sum) -> void {
    if (s == slots) {
      if (sum > best_value) {
        best_value = sum;
        best = current;
      }
      return;
    }
    self(self, s + 1, sum);  // slot s stays empty
    for (size_t c = 0; c < classes; ++c) {
      if (left[c] == 0 || value[c][s] <= 0) continue;
      --left[c];
      current[s] = static_cast<int>(c);
      self(self, s + 1, sum + value[c][s]);
      current[s] = -1;
      ++left[c];
    }
  };
  visit(visit, 0, 0);
  return best;
}

int64_t assignment_value(const std::vector<std::vector<int64_t>>& value, const std::vector<int>& slot_class) {
  int64_t sum = 0;
  for (size_t s = 0; s < slot_class.size(); ++s) {
    if (slot_class[s] >= 0) sum += value[static_cast<size_t>(slot_class[s])][s];
  }
  return sum;
}

}  // namespace ragmig::gpu
