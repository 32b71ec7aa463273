// Internal: the one executor of every session run (session.h), shared by Session (session.cc), its Binding
// (binding.cc) and the executor's own steps (session_executor.cc): a session's state, its idle IoBindings, and each
// step of a run — bind a plan, order and run it, collect its outputs — written once.
#pragma once

#include <onnxruntime_c_api.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ort.h"
#include "ortdlpack/api.h"
#include "ortdlpack/handle.h"
#include "ortdlpack/placement.h"
#include "ortdlpack/session.h"
#include "run_plan.h"
#include "session_creation.h"
#include "session_info.h"
#include "stream_order.h"

namespace ortdlpack {

using IoBinding = Owned<OrtIoBinding>;

// Idle IoBindings of one session, reused across runs (creating one costs more than a small run).
class BindingPool {
 public:
  explicit BindingPool(OrtSession* session) : session_(session) {}

  IoBinding acquire() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        IoBinding b = std::move(idle_.back());
        idle_.pop_back();
        return b;
      }
    }
    OrtIoBinding* binding = nullptr;
    check(ort().CreateIoBinding(session_, &binding));
    return IoBinding(binding);
  }

  void release(IoBinding binding) noexcept {
    // Clearing drops ORT's references to the inputs and outputs: a DLPack producer's memory is not held past run().
    ort().ClearBoundInputs(binding.get());
    ort().ClearBoundOutputs(binding.get());
    std::lock_guard<std::mutex> lock(mutex_);
    if (idle_.size() < kIdleBindings) {
      try {
        idle_.push_back(std::move(binding));
      } catch (...) {  // out of memory: the binding is simply released
      }
    }
  }

 private:
  OrtSession* session_;
  std::mutex mutex_;
  std::vector<IoBinding> idle_;
};

// ORT's error binding `role` `name` as "run: binding <role> '<name>': <ORT's message>": the message is made only
// when there is one (a run binds every input and output).
void check_binding(OrtStatus* status, const char* role, const std::string& name);
// Binds a plan's inputs and outputs; returns whether any output is allocated by ORT.
bool bind_plan(const RunPlan& plan, OrtIoBinding* binding);
// The outputs of a run, in plan order: the destinations themselves, the others the values ORT allocated (`produced`,
// one per output, taken from it) as Tensors holding `keeper`.
std::vector<Tensor> collect(const RunPlan& plan, std::vector<Owned<OrtValue>>& produced,
                            const std::shared_ptr<const void>& keeper);
// The same from an IoBinding's bound outputs (`any_allocated`: whether it has outputs ORT allocated).
std::vector<Tensor> collect(const RunPlan& plan, OrtIoBinding* binding, bool any_allocated,
                            const std::shared_ptr<const void>& keeper);
// The executor binds tensors only: a value without a DLPack form has no Tensor to bind.
void check_tensors_only(const RunPlan& plan);
// Whether ORT copies input `in`'s bound tensor to another device when it is bound (IoBinding's BindInput copies a
// feed to the memory the session reads that input from): a Binding binds it again before every run, or the run would
// read the copy made at bind time.
bool copied_when_bound(const RunPlan::Input& in);
// The caller's stream of a run (RunOptions::stream), on the device of its first feed or destination in device memory.
std::optional<CallerStream> run_stream(const RunOptions& options, const Feeds& feeds, bool session_has_one);
// The graph a run replays (its run options' gpu_graph_id; ORT's default, graph 0, when unset), or kNoCapture.
inline constexpr const char* kNoCapture = "-1";
std::string graph_of(const OrtRunOptions* run_options);
// The providers' names, in order.
std::vector<std::string> names_of(const std::vector<Provider>& providers);
// Whether a provider's options make its session capture device graphs (captures_graphs, session_creation.h).
bool any_captures_graphs(const std::vector<Provider>& providers);
// A borrowed session's EP devices: those it was created with, and the env's devices of the EPs it runs on.
std::vector<const OrtEpDevice*> with_devices_of(std::vector<const OrtEpDevice*> devices,
                                                const std::vector<Provider>& providers);
// Run options as ORT makes them for a run passed none: made once, where ORT would make them on every such run.
Owned<OrtRunOptions> new_run_options();

struct Session::Impl {
  Impl(OrtSession* borrowed, const BorrowedSession& how)
      : session(borrowed),
        info(borrowed, with_devices_of(how.ep_devices, how.providers)),
        providers(how.providers.empty() ? providers_of(how.ep_devices) : names_of(how.providers)),
        captures_graphs(how.captures_graphs || any_captures_graphs(how.providers)),
        owner(how.owner),
        pool(borrowed) {}
  explicit Impl(CreatedSession created)
      : owned(std::move(created.session)),
        stream(created.stream),
        session(owned.get()),
        info(session, created.ep_devices),
        providers(std::move(created.providers)),
        captures_graphs(created.captures_graphs),
        pool(session) {
    if (stream && stream->ort_runs_on_it) {
      // ORT computes on the caller's stream: a run need not wait for it on the host at its end.
      unsynchronized = new_run_options();
      check(ort().AddRunConfigEntry(unsynchronized.get(), "disable_synchronize_execution_providers", "1"));
    }
  }

  // A run ORT computes on the caller's stream returns with its work queued there when every output is in that
  // device's memory (a host output must be complete on return; readers of another device's memory are not ordered
  // after the caller's stream) and the caller passed no run options of their own.
  bool leaves_queued(const RunPlan& plan, const OrtRunOptions* run_options) const {
    if (!unsynchronized || run_options != nullptr) return false;
    for (const RunPlan::Output& out : plan.outputs) {
      if (!detail::same_memory(out.destination ? out.destination.memory_info() : out.memory, stream->memory)) {
        return false;
      }
    }
    return true;
  }

  // A run of tensors (Session::run, a front end's executor route): planned for `reader`, ordered with the caller's
  // stream, executed.
  std::vector<Tensor> run(const Feeds& feeds, const std::vector<std::string>& output_names, const RunOptions& options,
                          const Reader& reader) {
    const std::optional<CallerStream> per_run = run_stream(options, feeds, stream.has_value());
    const CallerStream* caller = stream ? &*stream : per_run ? &*per_run : nullptr;
    if (caller != nullptr) adopt_caller_work(*caller);  // before planning: a staging copy must read what it wrote
    const RunPlan plan = planned(feeds, output_names, options, reader);
    std::vector<Tensor> outputs = execute(plan, options.run_options, per_run ? &*per_run : nullptr);
    order_for_caller(outputs, per_run ? &*per_run : nullptr);
    return outputs;
  }

  // The plan of a run of tensors: the last one again when the run repeats its signature (PlanCache), else made anew.
  RunPlan planned(const Feeds& feeds, const std::vector<std::string>& output_names, const RunOptions& options,
                  const Reader& reader) {
    const bool cacheable = PlanCache::takes(options);
    if (cacheable) {
      const std::lock_guard<std::mutex> lock(plans_mutex);
      if (plans.matches(feeds, output_names, options, reader)) return plans.instance(feeds, options, info);
    }
    RunPlan plan = plan_run(info, feeds, output_names, options, {}, reader);
    check_tensors_only(plan);
    if (cacheable) {
      const std::lock_guard<std::mutex> lock(plans_mutex);
      plans.remember(plan, output_names, options, reader);
    }
    return plan;
  }

  // Runs a plan through ORT's plain Run (RunPlan::plain), or binds, runs and collects it on an idle IoBinding (the
  // IoBinding is cleared on every path).
  std::vector<Tensor> execute(const RunPlan& plan, const OrtRunOptions* run_options, const CallerStream* per_run) {
    if (captures_graphs && graph_of(run_options) != kNoCapture) {
      throw Error(ErrorKind::kInvalidArgument,
                  "run: the session replays captured device graphs, which read and write the tensors of the run "
                  "that captured them, not this run's: bind() once and run the Binding (one per gpu_graph_id), or "
                  "set the run option gpu_graph_id to -1 for this run");
    }
    std::vector<Tensor> outputs;
    if (plan.plain) {
      outputs = run_plain(plan, run_options, per_run);
    } else {
      struct Lease {
        BindingPool& pool;
        IoBinding binding;
        ~Lease() { pool.release(std::move(binding)); }
      } lease{pool, pool.acquire()};
      const bool any_allocated = bind_plan(plan, lease.binding.get());
      run_ordered(plan, run_options, per_run,
                  [&](const OrtRunOptions* o) { return ort().RunWithBinding(session, o, lease.binding.get()); });
      outputs = collect(plan, lease.binding.get(), any_allocated, owner);
    }
    settle_outputs(plan, outputs);
    return as_requested(plan, std::move(outputs));
  }

  // A plan ORT's plain Run carries out as RunWithBinding would (RunPlan::plain): the feeds and the destinations by
  // name and value, the outputs ORT allocates returned to its CPU memory; no IoBinding to bind and clear.
  std::vector<Tensor> run_plain(const RunPlan& plan, const OrtRunOptions* run_options, const CallerStream* per_run) {
    const size_t n = plan.inputs.size(), m = plan.outputs.size();
    std::vector<const char*> names(n + m);
    std::vector<const OrtValue*> feeds(n);
    std::vector<OrtValue*> values(m);
    for (size_t i = 0; i < n; ++i) {
      names[i] = plan.inputs[i].io->name.c_str();
      feeds[i] = plan.inputs[i].bound().ort_value();
    }
    for (size_t k = 0; k < m; ++k) {
      names[n + k] = plan.outputs[k].io->name.c_str();
      values[k] = plan.outputs[k].destination.ort_value();  // (NULL: ORT allocates it)
    }
    std::vector<Owned<OrtValue>> produced(m);
    const auto own = [&] {  // what ORT allocated, owned whatever happens next
      for (size_t k = 0; k < m; ++k) {
        if (!plan.outputs[k].destination) produced[k].reset(values[k]);
      }
    };
    try {
      run_ordered(plan, run_options, per_run, [&](const OrtRunOptions* o) {
        return ort().Run(session, o, names.data(), feeds.data(), n, names.data() + n, m, values.data());
      });
    } catch (...) {
      own();
      throw;
    }
    own();
    return collect(plan, produced, owner);
  }

  // A Binding of a session that replays graphs runs graph `graph` (its run options' gpu_graph_id): refused when
  // another Binding ran it, whose tensors a replay would read and write instead. ORT's C API cannot release a
  // captured graph: once its Binding is gone the graph stays captured on that Binding's (freed) tensors, so it is
  // never run again (retired).
  void claim_graph(const std::string& graph, const void* binding) {
    if (!captures_graphs || graph == kNoCapture) return;
    const std::lock_guard<std::mutex> lock(graphs_mutex);
    const void*& runs_it = graph_owners[graph];
    if (runs_it != nullptr && runs_it != binding) {
      throw Error(ErrorKind::kInvalidArgument,
                  "run: graph " + graph + " of the session was captured by another Binding" +
                      (runs_it == &kRetired ? " (released since)" : "") +
                      ", whose tensors a replay reads and writes: give this one another gpu_graph_id" +
                      (runs_it == &kRetired ? "" : ", or run that Binding"));
    }
    runs_it = binding;
  }
  void retire_graphs(const void* binding) noexcept {
    const std::lock_guard<std::mutex> lock(graphs_mutex);
    for (auto& [graph, runs_it] : graph_owners) {
      if (runs_it == binding) runs_it = &kRetired;
    }
  }
  static constexpr char kRetired = 0;  // what runs a graph whose Binding is gone: nothing ever again

  // Orders and runs a plan (the caller's work already adopted, staging done) with `call(run options)`, ORT's run of
  // it; `per_run`: the run's own caller's stream (RunOptions::stream), whose later work the outputs are then ordered
  // before.
  template <class Call>
  void run_ordered(const RunPlan& plan, const OrtRunOptions* run_options, const CallerStream* per_run, Call call) {
    const bool leave_queued = leaves_queued(plan, run_options);
    order_before_run(plan, stream ? &*stream : per_run);
    const OrtRunOptions* options = leave_queued ? unsynchronized.get() : run_options ? run_options : defaults.get();
    if (OrtStatus* status = call(options)) {
      const Owned<OrtStatus> release(status);  // ORT's code and message, as they are: a front end words them as ORT's
      throw Error(ort().GetErrorCode(status), ort().GetErrorMessage(status));  // own binding does
    }
    if (leave_queued) adopt_caller_work(*stream);
  }

  // A bound plan, run (Binding::run).
  void run_bound(const RunPlan& plan, OrtIoBinding* binding, const OrtRunOptions* run_options,
                 const CallerStream* per_run) {
    run_ordered(plan, run_options, per_run,
                [&](const OrtRunOptions* o) { return ort().RunWithBinding(session, o, binding); });
  }

  // After a run with its own caller's stream: the outputs ORT wrote are complete for work queued on it next.
  static void order_for_caller(const std::vector<Tensor>& outputs, const CallerStream* per_run) {
    if (per_run == nullptr) return;
    for (const Tensor& t : outputs) order_for_consumer(t, static_cast<int64_t>(per_run->handle));
  }

  // The last plan of a run that writes nothing in place, orders with no stream of the run's own and places outputs
  // nowhere in particular (no output_target but the host): what plan_run decided for it depends on the feeds' names
  // and memory, the output names, the destinations' names and memory and who reads the outputs — not on shapes (ORT
  // checks them) nor on addresses — so a run with the same ones takes it again, its feeds staged anew where it staged
  // them (a decode loop feeding each step's outputs back) and its destinations checked and set anew
  // (replan_destinations: their shapes, writability and overlaps are this run's). A new SessionInfo (set_providers: a
  // new Session) starts without one.
  class PlanCache {
   public:
    static bool takes(const RunOptions& o) {
      return o.in_place.empty() && !o.stream &&
             (o.output_target.kind == Target::Kind::kAnywhere || o.output_target.kind == Target::Kind::kHost);
    }
    bool matches(const Feeds& feeds, const std::vector<std::string>& output_names, const RunOptions& o,
                 const Reader& reader) const {
      if (!valid_ || feeds.size() != memory_.size() || o.destinations.size() != destinations_.size() ||
          output_names != output_names_ || o.output_target.kind != target_ || o.read_on_host != read_on_host_ ||
          reader.framework != reader_.framework || reader.implied != reader_.implied) {
        return false;
      }
      for (size_t i = 0; i < feeds.size(); ++i) {
        if (feeds[i].first != plan_.inputs[i].io->name ||
            detail::memory_id(feeds[i].second.memory_info()) != memory_[i]) {
          return false;
        }
      }
      for (size_t k = 0; k < o.destinations.size(); ++k) {
        const auto& [name, tensor] = o.destinations[k];
        if (!tensor || name != destinations_[k].first ||
            detail::memory_id(tensor.memory_info()) != destinations_[k].second) {
          return false;
        }
      }
      return true;
    }
    RunPlan instance(const Feeds& feeds, const RunOptions& o, const SessionInfo& info) const {
      RunPlan plan = plan_;
      for (size_t i = 0; i < feeds.size(); ++i) plan.inputs[i].feed = feeds[i].second;  // (not empty: see matches)
      replan_destinations(info, o, plan);
      for (size_t i = 0; i < feeds.size(); ++i) {  // last, as plan_run stages: once all was checked
        RunPlan::Input& in = plan.inputs[i];
        if (staged_[i]) in.staged = place(in.feed, Target::host(), CopyMode::kIfNeeded, "run").tensor;
      }
      return plan;
    }
    void remember(const RunPlan& plan, const std::vector<std::string>& output_names, const RunOptions& o,
                  const Reader& reader) {
      plan_ = plan;
      memory_.clear();
      staged_.clear();
      for (RunPlan::Input& in : plan_.inputs) {  // (the template holds no tensor of the caller's)
        memory_.push_back(detail::memory_id(in.feed.memory_info()));
        staged_.push_back(static_cast<bool>(in.staged));
        in.feed = Tensor();
        in.staged = Tensor();
      }
      for (RunPlan::Output& out : plan_.outputs) out.destination = Tensor();
      destinations_.clear();
      for (const auto& [name, tensor] : o.destinations)
        destinations_.emplace_back(name, detail::memory_id(tensor.memory_info()));
      output_names_ = output_names;
      target_ = o.output_target.kind;
      read_on_host_ = o.read_on_host;
      reader_ = reader;
      valid_ = true;
    }

   private:
    bool valid_ = false;
    RunPlan plan_;
    std::vector<detail::MemoryId> memory_;                                // of each feed (by value: see MemoryId)
    std::vector<bool> staged_;                                            // whether each feed is staged to the host
    std::vector<std::pair<std::string, detail::MemoryId>> destinations_;  // each destination's name and memory
    std::vector<std::string> output_names_;
    Target::Kind target_ = Target::Kind::kAnywhere;
    bool read_on_host_ = false;
    Reader reader_;
  };

  Owned<OrtSession> owned;              // the session when this class created it (declared first: destroyed last)
  std::optional<CallerStream> stream;   // SessionConfig::stream
  Owned<OrtRunOptions> unsynchronized;  // runs that leave their work queued on `stream` (ORT computes on it)
  Owned<OrtRunOptions> defaults = new_run_options();  // runs without options of their own (read-only: shared)
  OrtSession* session;
  SessionInfo info;
  std::vector<std::string> providers;
  bool captures_graphs;
  std::shared_ptr<const void> owner;  // BorrowedSession::owner
  std::mutex graphs_mutex;
  std::map<std::string, const void*> graph_owners;  // graph id -> the Binding (its Impl) that runs it, or kRetired
  std::mutex plans_mutex;
  PlanCache plans;
  BindingPool pool;
};

struct Binding::Impl {
  std::shared_ptr<Session::Impl> session;
  RunPlan plan;                                // after a run that allocated, every output has its destination
  const OrtRunOptions* run_options = nullptr;  // bind()'s RunOptions::run_options
  std::optional<CallerStream> stream;          // bind()'s RunOptions::stream
  IoBinding binding;                           // bound once (outputs again after a run that allocated)
  std::vector<size_t> allocated;               // the outputs ORT allocates (no caller's destination, not in place)
  bool allocates = true;                       // whether the next run allocates them
  std::vector<std::string> names;              // of plan.outputs
  std::vector<Tensor> outputs;                 // plan.outputs' tensors, after the first run
  std::vector<Tensor> returned;                // as_requested(plan, outputs): what run() returns
  std::vector<std::string> returned_names;
  std::vector<size_t> copied;  // the inputs copied before every run: staged or copied_when_bound
  std::mutex mutex;

  void note_copies() {
    copied.clear();
    for (size_t i = 0; i < plan.inputs.size(); ++i) {
      if (plan.inputs[i].staged || copied_when_bound(plan.inputs[i])) copied.push_back(i);
    }
  }

  // Binding::run's parts (binding.cc). What a Binding binds, kept before a run(changed) to put back if it fails.
  struct Bound {
    RunPlan plan;
    std::vector<Tensor> outputs, returned;
    bool allocates = false;
    // Releases what it holds (the previous feeds), keeping the vectors' capacity for the next run(changed).
    void clear() noexcept {
      plan.inputs.clear();
      plan.outputs.clear();
      plan.returned.clear();
      plan.values.clear();
      outputs.clear();
      returned.clear();
    }
  };
  Bound before;  // (held empty between runs: assigned into, it allocates nothing once the first run(changed) did)
  // Binds the inputs named in `changed` to their new tensors; where it throws, part of them may be bound.
  void rebind(const Feeds& changed);
  // Binds what `before` bound again, ORT's IoBinding too (bind_plan: an output without a destination, ORT allocates
  // on the next run, as `allocates` says). Everything it binds was bound before. `before` is left with what failed.
  void restore();
  // One run of what is bound; returns the outputs as run() does.
  std::vector<Tensor> run_once(const OrtRunOptions* per_call);

  ~Impl() { session->retire_graphs(this); }
};

}  // namespace ortdlpack
