// graph.cpp: tessera::Graph. Capture records launches (tessera and unsafe kernels) as nodes: the
// launch plan each filled in (launch_plan.h) and its arguments; tensors are held weakly and
// Scalars by their shared cell. A replay materializes the bindings (throwing if a tensor is gone),
// reads the scalars and submits one piece of work (execution.h) that uses every bound tensor. On
// the CPU target that work runs the nodes in order; on a GPU it launches a CUDA graph built at the
// first replay from explicit kernel nodes, with an edge wherever two nodes share a tensor and one
// of them writes it (programmatic into tile kernels, which wait for their prerequisites
// themselves: see cuda_driver.h), and patches the parameters of nodes whose scalars or bindings
// changed (cuGraphExecKernelNodeSetParams). A rebind that changes which nodes share tensors
// rebuilds the CUDA graph at the next replay instead.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <thread>

#include "execution/cpu_programs.h"
#include "execution/execution.h"
#include "execution/graph_capture.h"
#include "execution/launch_plan.h"
#include "execution/output_overlap.h"
#include "tessera/graph.h"

namespace tessera::detail {
namespace {

using Kind = ArgDesc::Kind;

// The CUDA graph and its executable; kept alive by replays in flight.
struct CudaGraph {
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  std::vector<std::shared_ptr<const void>> kernels;  // the modules its nodes launch
  ~CudaGraph() {
    CudaDriver* d = CudaDriver::get_if_available();
    if (!d) return;
    d->cuCtxSetCurrent(d->context());
    if (exec) d->cuGraphExecDestroy(exec);
    if (graph) d->cuGraphDestroy(graph);
  }
};

struct Node {
  std::string kernel;
  LaunchPlan plan;
  std::vector<ArgDesc> args;  // storage left null (see storages); scalars: the values last used
  std::vector<std::weak_ptr<Storage>> storages;  // per argument: what it is bound to
  std::vector<int> binding;                      // per argument: index into bindings (-1: scalar)
  bool has_cells = false;                        // some scalar is a tessera::Scalar
  bool dirty = true;                             // its parameters changed since the CUDA node got them
  CUgraphNode cuda_node = nullptr;               // null for an empty grid
  std::vector<int64_t> slots;                    // the parameters the CUDA node has
};

// A tensor the graph uses, once however many launches use it.
struct Binding {
  std::weak_ptr<Storage> storage;
  bool write = false;
  std::size_t node = 0, arg = 0;  // its first use, for messages
};

thread_local std::weak_ptr<GraphImpl> t_capture;
thread_local bool t_capturing = false;

bool same_owner(const std::weak_ptr<Storage>& a, const std::weak_ptr<Storage>& b) {
  return !a.owner_before(b) && !b.owner_before(a);
}

}  // namespace

class GraphImpl final : public GraphCapture {
 public:
  explicit GraphImpl(Target t) : target(t) {}

  Target target_for(const LaunchOptions* options, Target t, std::string_view kernel) const override {
    if (options && options->target && t != target)
      throw Error(fmt::format("tessera: kernel '{}' launched for {} while capturing a graph for {}", kernel,
                              target_name(t), target_name(target)));
    if (options && !options->after.empty())
      throw Error(fmt::format("tessera: kernel '{}': LaunchOptions::after cannot be recorded into a graph "
                              "(order the replay instead)",
                              kernel));
    return target;
  }

  void record(std::string_view kernel, LaunchPlan plan, std::span<const ArgDesc> args) override {
    Node n;
    n.kernel = std::string(kernel);
    n.plan = std::move(plan);
    for (const ArgDesc& a : args) {
      ArgDesc copy = a;
      n.storages.emplace_back(a.storage);
      copy.storage.reset();
      n.has_cells = n.has_cells || copy.cell != nullptr;
      n.args.push_back(std::move(copy));
    }
    std::lock_guard lock(mutex);
    nodes.push_back(std::move(n));
  }

  // Numbers the distinct tensors (after capture and after a rebind); returns, per (node, tensor
  // argument), its binding: equal results mean the same sharing between launches.
  std::vector<int> index_bindings() {
    bindings.clear();
    std::vector<int> signature;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      Node& n = nodes[i];
      n.binding.assign(n.args.size(), -1);
      for (std::size_t j = 0; j < n.args.size(); ++j) {
        if (n.args[j].kind == Kind::scalar) continue;
        std::size_t b = 0;
        while (b < bindings.size() && !same_owner(bindings[b].storage, n.storages[j])) ++b;
        if (b == bindings.size()) bindings.push_back({n.storages[j], false, i, j});
        bindings[b].write = bindings[b].write || n.args[j].kind == Kind::out;
        n.binding[j] = static_cast<int>(b);
        signature.push_back(static_cast<int>(b));
      }
    }
    return signature;
  }

  CompletionPtr replay(const LaunchOptions& options, bool wait);
  void rebind(const std::shared_ptr<Storage>& bound, const std::shared_ptr<Storage>& replacement, DType dtype,
              int rank, const int64_t* shape, const int64_t* strides,
              int64_t bound_offset, int64_t replacement_offset);
  void rebind_parameter(std::size_t launch, std::size_t parameter, const std::shared_ptr<Storage>& replacement,
                        DType dtype, int rank, const int64_t* shape, const int64_t* strides,
                        int64_t replacement_offset);
  void move_view(std::size_t launch, std::size_t parameter, const std::shared_ptr<Storage>& storage, DType dtype,
                 int rank, const int64_t* shape, const int64_t* strides, int64_t offset);
  // Rebinds every use of `old` (bound at `bound_offset`); the mutex is held.
  void rebind_locked(const std::weak_ptr<Storage>& old, const std::shared_ptr<Storage>& replacement, DType dtype,
                     int rank, const int64_t* shape, const int64_t* strides, int64_t bound_offset,
                     int64_t replacement_offset);

  const Target target;
  std::mutex mutex;
  std::vector<Node> nodes;
  std::vector<Binding> bindings;
  bool capturing = false;
  bool captured = false;
  std::shared_ptr<CudaGraph> cuda;  // built at the first GPU replay
  bool cuda_stale = false;          // a rebind changed which nodes share tensors: rebuild
  bool all_dirty = true;            // a rebind changed addresses: every node's parameters
  std::shared_ptr<const std::string> label;
};

namespace {

// A replay, with the graph's tensors held for its submission.
class GraphWork final : public Work {
 public:
  GraphWork(GraphImpl& g, std::vector<std::shared_ptr<Storage>> bound) : g_(g), bound_(std::move(bound)) {}

  std::function<void()> cpu_task() override {
    struct Step {
      std::shared_ptr<const void> owner;  // keeps *program alive
      const CpuProgram* program;
      std::vector<int64_t> slots;
      Grid grid;
    };
    std::vector<int64_t> hosts(bound_.size());
    for (std::size_t b = 0; b < bound_.size(); ++b) hosts[b] = reinterpret_cast<int64_t>(bound_[b]->host_raw());
    std::vector<Step> steps;
    steps.reserve(g_.nodes.size());
    for (const Node& n : g_.nodes) {
      std::vector<int64_t> pointers(n.args.size(), 0);
      for (std::size_t j = 0; j < n.args.size(); ++j)
        if (n.binding[j] >= 0) pointers[j] = hosts[n.binding[j]];
      Step& step = steps.emplace_back(Step{n.plan.owner, &n.plan.code->cpu, {}, n.plan.programs});
      n.plan.fill_slots(n.args, pointers, step.slots);
    }
    return [steps = std::move(steps)] {
      for (const Step& s : steps) run_programs(*s.program, s.slots, s.grid);
    };
  }

  void enqueue_gpu(CudaDriver& driver, CUstream stream) override {
    addresses_.resize(bound_.size());
    for (std::size_t b = 0; b < bound_.size(); ++b)
      addresses_[b] = static_cast<int64_t>(device_address(driver, *bound_[b]));
    if (!g_.cuda || g_.cuda_stale) {
      build(driver);
    } else {
      for (Node& n : g_.nodes) {
        if (!n.cuda_node || !(n.dirty || g_.all_dirty)) continue;
        std::vector<int64_t> slots = slots_of(n);
        n.dirty = false;
        if (slots == n.slots) continue;
        n.slots = std::move(slots);
        KernelNodeParams p = params_of(driver, n);
        driver.check(driver.cuGraphExecKernelNodeSetParams_v2(g_.cuda->exec, n.cuda_node, &p),
                     fmt::format("cuGraphExecKernelNodeSetParams (kernel '{}')", n.kernel));
      }
    }
    g_.all_dirty = false;
    driver.check(driver.cuGraphLaunch(g_.cuda->exec, stream), "cuGraphLaunch");
  }

  std::shared_ptr<const void> keep_alive() const override { return g_.cuda; }

 private:
  std::vector<int64_t> slots_of(const Node& n) {
    std::vector<int64_t> pointers(n.args.size(), 0);
    for (std::size_t j = 0; j < n.args.size(); ++j)
      if (n.binding[j] >= 0) pointers[j] = addresses_[n.binding[j]];
    std::vector<int64_t> slots;
    n.plan.fill_slots(n.args, pointers, slots);
    return slots;
  }

  KernelNodeParams params_of(CudaDriver& driver, Node& n) {
    const LaunchPlan& plan = n.plan;
    plan.parameter_pointers(n.slots, params_);
    KernelNodeParams p;
    p.func = plan.code->function(driver, plan.shared_bytes);
    p.grid_x = plan.grid[0];
    p.grid_y = plan.grid[1];
    p.grid_z = plan.grid[2];
    p.block_x = plan.block[0];
    p.block_y = plan.block[1];
    p.block_z = plan.block[2];
    p.shared_bytes = plan.shared_bytes;
    p.kernel_params = params_.data();
    return p;
  }

  // Explicit kernel nodes, with an edge wherever two launches share a tensor and one writes it.
  void build(CudaDriver& driver) {
    auto cuda = std::make_shared<CudaGraph>();
    driver.check(driver.cuGraphCreate(&cuda->graph, 0), "cuGraphCreate");
    struct Hazard {
      CUgraphNode writer = nullptr;
      std::vector<CUgraphNode> readers;
    };
    std::vector<Hazard> hazards(bound_.size());
    for (Node& n : g_.nodes) {
      n.cuda_node = nullptr;
      n.dirty = false;
      cuda->kernels.push_back(n.plan.owner);
      if (n.plan.empty()) continue;
      // A reader waits for the tensor's last writer; a writer for the readers since then, each of
      // which already waits for that writer (so in a chain a -> b -> c, where c writes what a wrote
      // and reads what b wrote, c gets only the edge from b: a chain of single edges is what lets
      // the graph overlap launches), or for the last writer if none read it since.
      std::vector<CUgraphNode> deps;
      for (std::size_t j = 0; j < n.args.size(); ++j) {
        if (n.binding[j] < 0) continue;
        Hazard& h = hazards[n.binding[j]];
        if (n.args[j].kind == Kind::out && !h.readers.empty())
          deps.insert(deps.end(), h.readers.begin(), h.readers.end());
        else if (h.writer)
          deps.push_back(h.writer);
      }
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      n.slots = slots_of(n);
      KernelNodeParams p = params_of(driver, n);  // its function opted into the node's shared memory
      driver.check(driver.cuGraphAddKernelNode_v2(&n.cuda_node, cuda->graph, nullptr, 0, &p),
                   fmt::format("cuGraphAddKernelNode (kernel '{}')", n.kernel));
      // A tile kernel for sm_90 and newer waits for its prerequisites itself (griddepcontrol.wait):
      // programmatic edges let it be launched while they finish. Older targets' kernels and unsafe
      // kernels make no such wait: full edges (KernelCode::programmatic).
      if (!deps.empty()) {
        GraphEdgeData edge;
        if (n.plan.code->programmatic) {
          edge.from_port = kGraphKernelNodePortProgrammatic;
          edge.type = kGraphDependencyTypeProgrammatic;
        }
        std::vector<GraphEdgeData> edges(deps.size(), edge);
        std::vector<CUgraphNode> to(deps.size(), n.cuda_node);
        driver.check(driver.cuGraphAddDependencies_v2(cuda->graph, deps.data(), to.data(), edges.data(), deps.size()),
                     fmt::format("cuGraphAddDependencies (kernel '{}')", n.kernel));
      }
      for (std::size_t j = 0; j < n.args.size(); ++j) {
        if (n.binding[j] < 0) continue;
        Hazard& h = hazards[n.binding[j]];
        if (n.args[j].kind == Kind::out) {
          h.writer = n.cuda_node;
          h.readers.clear();
        } else {
          h.readers.push_back(n.cuda_node);
        }
      }
    }
    driver.check(driver.cuGraphInstantiateWithFlags(&cuda->exec, cuda->graph, 0), "cuGraphInstantiate");
    g_.cuda = std::move(cuda);
    g_.cuda_stale = false;
  }

  GraphImpl& g_;
  std::vector<std::shared_ptr<Storage>> bound_;
  std::vector<int64_t> addresses_;
  std::vector<void*> params_;
};

}  // namespace

CompletionPtr GraphImpl::replay(const LaunchOptions& options, bool wait) {
  if (options.target && *options.target != target)
    throw Error(fmt::format("tessera: a graph for {} cannot be replayed on {}", target_name(target),
                            target_name(*options.target)));
  std::lock_guard lock(mutex);
  if (capturing) throw Error("tessera: a graph cannot be replayed while it is being captured");
  if (nodes.empty()) return nullptr;
  if (is_gpu(target) && !CudaDriver::get_if_available())
    throw Error(fmt::format("tessera: cannot replay a graph on {}: no usable GPU ({})", target_name(target),
                            CudaDriver::unavailable_reason()));
  Submission sub;
  if (!label) label = std::make_shared<const std::string>(fmt::format("graph replay ({} launches)", nodes.size()));
  sub.label = label;
  sub.gpu = is_gpu(target);
  sub.options = &options;
  sub.wait = wait;
  std::vector<std::shared_ptr<Storage>> bound(bindings.size());
  for (std::size_t b = 0; b < bindings.size(); ++b) bound[b] = bindings[b].storage.lock();
  if (auto dead = std::find(bound.begin(), bound.end(), nullptr); dead != bound.end()) {
    // Name the first use of the first dead tensor, and how to bind a live one there.
    const Binding& b = bindings[static_cast<std::size_t>(dead - bound.begin())];
    const ArgDesc& a = nodes[b.node].args[b.arg];
    const auto more = std::count(dead + 1, bound.end(), nullptr);
    throw Error(fmt::format(
        "tessera: graph replay: the tensor bound to parameter {} of launch {} (kernel '{}') no longer exists{}; "
        "bind a live {} tensor of shape [{}] and strides [{}] there with g.rebind({}, {}, tensor) (launches and "
        "parameters are counted from 0 in capture order; every use of the dead tensor is rebound), or capture "
        "again",
        b.arg, b.node, nodes[b.node].kernel,
        more ? fmt::format(" (nor do {} other tensors of the graph)", more) : std::string(), dtype_name(a.dtype),
        fmt::join(a.shape.begin(), a.shape.begin() + a.rank, " "),
        fmt::join(a.strides.begin(), a.strides.begin() + a.rank, " "), b.node, b.arg));
  }
  for (std::size_t b = 0; b < bindings.size(); ++b) sub.uses.push_back({bound[b].get(), bindings[b].write});
  for (Node& n : nodes) {
    if (!n.has_cells) continue;
    for (ArgDesc& a : n.args) {
      if (!a.cell) continue;
      std::uint64_t bits = a.cell->bits.load(std::memory_order_relaxed), old = 0;
      std::memcpy(&old, a.scalar.data(), sizeof(old));
      if (bits == old) continue;
      std::memcpy(a.scalar.data(), &bits, sizeof(bits));
      n.dirty = true;
    }
  }
  GraphWork work(*this, std::move(bound));
  return submit_work(sub, work);
}

void GraphImpl::rebind(const std::shared_ptr<Storage>& bound, const std::shared_ptr<Storage>& replacement,
                       DType dtype, int rank, const int64_t* shape, const int64_t* strides, int64_t bound_offset,
                       int64_t replacement_offset) {
  if (!bound || !replacement) throw Error("tessera::Graph::rebind: a moved-from tensor was given");
  std::lock_guard lock(mutex);
  if (capturing) throw Error("tessera::Graph::rebind: the graph is being captured");
  rebind_locked(bound, replacement, dtype, rank, shape, strides, bound_offset, replacement_offset);
}

void GraphImpl::rebind_parameter(std::size_t launch, std::size_t parameter,
                                 const std::shared_ptr<Storage>& replacement, DType dtype, int rank,
                                 const int64_t* shape, const int64_t* strides, int64_t replacement_offset) {
  if (!replacement) throw Error("tessera::Graph::rebind: a moved-from tensor was given");
  std::lock_guard lock(mutex);
  if (capturing) throw Error("tessera::Graph::rebind: the graph is being captured");
  if (launch >= nodes.size())
    throw Error(fmt::format("tessera::Graph::rebind: launch {} of a graph of {} launches", launch, nodes.size()));
  const Node& n = nodes[launch];
  if (parameter >= n.args.size() || n.args[parameter].kind == Kind::scalar)
    throw Error(fmt::format("tessera::Graph::rebind: parameter {} of launch {} (kernel '{}', {} parameters) is not "
                            "a tensor",
                            parameter, launch, n.kernel, n.args.size()));
  const std::weak_ptr<Storage> old = n.storages[parameter];
  rebind_locked(old, replacement, dtype, rank, shape, strides, n.args[parameter].offset, replacement_offset);
}

void GraphImpl::move_view(std::size_t launch, std::size_t parameter, const std::shared_ptr<Storage>& storage,
                          DType dtype, int rank, const int64_t* shape, const int64_t* strides, int64_t offset) {
  if (!storage) throw Error("tessera::Graph::move_view: a moved-from tensor was given");
  std::lock_guard lock(mutex);
  if (capturing) throw Error("tessera::Graph::move_view: the graph is being captured");
  if (launch >= nodes.size())
    throw Error(fmt::format("tessera::Graph::move_view: launch {} of a graph of {} launches", launch, nodes.size()));
  Node& n = nodes[launch];
  if (parameter >= n.args.size() || n.args[parameter].kind == Kind::scalar)
    throw Error(fmt::format("tessera::Graph::move_view: parameter {} of launch {} (kernel '{}', {} parameters) is "
                            "not a tensor",
                            parameter, launch, n.kernel, n.args.size()));
  const ArgDesc& a = n.args[parameter];
  const std::shared_ptr<Storage> bound = n.storages[parameter].lock();
  if (bound != storage || a.dtype != dtype || a.rank != rank || !std::equal(shape, shape + rank, a.shape.begin()) ||
      !std::equal(strides, strides + rank, a.strides.begin()))
    throw Error(fmt::format("tessera::Graph::move_view: parameter {} of launch {} (kernel '{}'): the view must be "
                            "of the storage bound there, with the same dtype, shape and strides",
                            parameter, launch, n.kernel));
  const KernelCode& code = *n.plan.code;
  if (code.static_shapes)
    throw Error(fmt::format("tessera::Graph::move_view: launch {} (kernel '{}') was compiled for its static shapes "
                            "and offsets (LaunchOptions::static_shapes): capture again",
                            launch, n.kernel));
  const int64_t bytes = offset * static_cast<int64_t>(dtype_size(dtype));
  if (parameter < code.params.size() && code.params[parameter].aligned && bytes % 16 != 0)
    throw Error(fmt::format("tessera::Graph::move_view: launch {} (kernel '{}') was compiled for 16-byte aligned "
                            "memory in parameter {}; element {} is not aligned: capture again",
                            launch, n.kernel, parameter, offset));
  std::vector<ArgDesc> moved = n.args;
  moved[parameter].offset = offset;
  if (code.checks_overlap) {
    bool complete = true;
    for (std::size_t k = 0; k < moved.size(); ++k)
      if (moved[k].kind != Kind::scalar) complete = complete && (moved[k].storage = n.storages[k].lock());
    if (complete) {
      try {
        check_output_overlap(n.kernel, moved);
      } catch (const Error& e) {
        throw Error(fmt::format("tessera::Graph::move_view: launch {}: {}", launch, e.what()));
      }
    }
  }
  n.args[parameter].offset = offset;
  n.dirty = true;  // this node's parameters only: no other node sees the offset
}

void GraphImpl::rebind_locked(const std::weak_ptr<Storage>& old, const std::shared_ptr<Storage>& replacement,
                              DType dtype, int rank, const int64_t* shape, const int64_t* strides,
                              int64_t bound_offset, int64_t replacement_offset) {
  // The captured parameters keep their storage offsets: a view must be replaced by a view at the
  // same offset of its own storage.
  if (replacement_offset != bound_offset)
    throw Error(fmt::format("tessera::Graph::rebind: the replacement starts at element {} of its storage, the "
                            "bound tensor at element {}: capture again",
                            replacement_offset, bound_offset));
  std::vector<std::pair<std::size_t, std::size_t>> changed;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    Node& n = nodes[i];
    for (std::size_t j = 0; j < n.args.size(); ++j) {
      const ArgDesc& a = n.args[j];
      if (a.kind == Kind::scalar || !same_owner(n.storages[j], old)) continue;
      if (a.dtype != dtype || a.rank != rank || !std::equal(shape, shape + rank, a.shape.begin()) ||
          !std::equal(strides, strides + rank, a.strides.begin()) || a.offset != bound_offset)
        throw Error(fmt::format("tessera::Graph::rebind: parameter {} of launch {} (kernel '{}') was captured with "
                                "another shape, strides or view of the storage",
                                j, i, n.kernel));
      changed.emplace_back(i, j);
    }
  }
  if (changed.empty()) throw Error("tessera::Graph::rebind: the tensor is not bound in this graph");
  // An output must stay distinct from the launch's other tensors.
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    std::vector<const Storage*> now(n.args.size(), nullptr);
    bool touched = false;
    for (std::size_t k = 0; k < n.args.size(); ++k) {
      if (n.args[k].kind == Kind::scalar) continue;
      bool is_changed = std::find(changed.begin(), changed.end(), std::pair{i, k}) != changed.end();
      touched = touched || is_changed;
      now[k] = is_changed ? replacement.get() : n.storages[k].lock().get();
    }
    if (!touched) continue;
    for (std::size_t j = 0; j < now.size(); ++j)
      for (std::size_t k = j + 1; k < now.size(); ++k)
        if (now[j] && now[j] == now[k] && (n.args[j].kind == Kind::out || n.args[k].kind == Kind::out))
          throw Error(fmt::format("tessera::Graph::rebind: launch {} (kernel '{}') would use one tensor as "
                                  "parameters {} and {}, and one of them is an output",
                                  i, n.kernel, j, k));
    // Foreign memory of the replacement must not overlap an output of the launch, or the reverse
    // (output_overlap.h; unsafe kernels are the opt-out).
    if (!n.plan.code->checks_overlap) continue;
    std::vector<ArgDesc> bound_args = n.args;
    bool complete = true;
    for (std::size_t k = 0; k < n.args.size(); ++k) {
      if (n.args[k].kind == Kind::scalar) continue;
      bool is_changed = std::find(changed.begin(), changed.end(), std::pair{i, k}) != changed.end();
      bound_args[k].storage = is_changed ? replacement : n.storages[k].lock();  // same offset (checked above)
      complete = complete && bound_args[k].storage;
    }
    if (!complete) continue;  // a tensor gone: the next replay says so
    try {
      check_output_overlap(n.kernel, bound_args);
    } catch (const Error& e) {
      throw Error(fmt::format("tessera::Graph::rebind: launch {}: {}", i, e.what()));
    }
  }
  // A layout specialization (16-byte alignment of foreign device memory) must still hold, and so
  // must the promise of a frozen input (freezing is for good: checked once, here).
  for (auto [i, j] : changed) {
    const std::vector<KernelCode::Param>& params = nodes[i].plan.code->params;
    if (j < params.size() && params[j].frozen && !replacement->frozen())
      throw Error(fmt::format("tessera::Graph::rebind: launch {} (kernel '{}') was compiled for a frozen tensor in "
                              "parameter {} (read before the kernels it follows end); the replacement is not "
                              "frozen: freeze it (Tensor::freeze) or capture again",
                              i, nodes[i].kernel, j));
    if (is_gpu(target) && replacement->foreign_device() && j < params.size() && params[j].aligned &&
        replacement->mirror->address() % 16 != 0)
      throw Error(fmt::format("tessera::Graph::rebind: launch {} (kernel '{}') was compiled for 16-byte aligned "
                              "memory in parameter {}; the replacement is not aligned: capture again",
                              i, nodes[i].kernel, j));
  }
  std::vector<int> before = index_bindings();
  for (auto [i, j] : changed) nodes[i].storages[j] = replacement;
  if (index_bindings() != before) cuda_stale = true;
  all_dirty = true;
}

GraphCapture* current_capture() {
  if (!t_capturing) return nullptr;
  auto g = t_capture.lock();
  if (!g || !g->capturing) return nullptr;
  return g.get();  // kept alive by the Capture object on this thread
}

void rebind(GraphImpl& g, const std::shared_ptr<Storage>& bound, const std::shared_ptr<Storage>& replacement,
            DType dtype, int rank, const int64_t* shape, const int64_t* strides, int64_t bound_offset,
            int64_t replacement_offset) {
  g.rebind(bound, replacement, dtype, rank, shape, strides, bound_offset, replacement_offset);
}

void move_view(GraphImpl& g, std::size_t launch, std::size_t parameter, const std::shared_ptr<Storage>& storage,
               DType dtype, int rank, const int64_t* shape, const int64_t* strides, int64_t offset) {
  g.move_view(launch, parameter, storage, dtype, rank, shape, strides, offset);
}

void rebind_parameter(GraphImpl& g, std::size_t launch, std::size_t parameter,
                      const std::shared_ptr<Storage>& replacement, DType dtype, int rank, const int64_t* shape,
                      const int64_t* strides, int64_t replacement_offset) {
  g.rebind_parameter(launch, parameter, replacement, dtype, rank, shape, strides, replacement_offset);
}

}  // namespace tessera::detail

namespace tessera {

Graph::Graph(Target target) : impl_(std::make_shared<detail::GraphImpl>(target)) {}
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;
Graph::~Graph() = default;

Graph::Capture::Capture(std::shared_ptr<detail::GraphImpl> g) : g_(std::move(g)) {}
Graph::Capture::Capture(Capture&& other) noexcept : g_(std::move(other.g_)) {}
Graph::Capture::~Capture() { end(); }

void Graph::Capture::end() {
  if (!g_) return;
  {
    std::lock_guard lock(g_->mutex);
    g_->capturing = false;
    g_->captured = true;
    g_->index_bindings();
  }
  if (detail::t_capture.lock() == g_) {
    detail::t_capture.reset();
    detail::t_capturing = false;
  }
  g_.reset();
}

Graph::Capture Graph::capture() {
  live("capture");
  if (detail::current_capture()) throw Error("tessera::Graph::capture: this thread is already capturing a graph");
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->captured || impl_->capturing)
      throw Error("tessera::Graph::capture: a graph is captured once; make a new Graph");
    impl_->capturing = true;
  }
  detail::t_capture = impl_;
  detail::t_capturing = true;
  return Capture(impl_);
}

detail::GraphImpl& Graph::live(const char* operation) const {
  if (!impl_) throw Error(fmt::format("tessera::Graph::{}: the graph was moved from", operation));
  return *impl_;
}

Target Graph::target() const { return live("target").target; }

std::size_t Graph::size() const {
  detail::GraphImpl& g = live("size");
  std::lock_guard lock(g.mutex);
  return g.nodes.size();
}

void Graph::replay(const LaunchOptions& options) { live("replay").replay(options, true); }

LaunchHandle<> Graph::replay_async(const LaunchOptions& options) { return LaunchHandle<>(live("replay_async").replay(options, false)); }

}  // namespace tessera
