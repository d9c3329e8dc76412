// Autograd in Python: Tensor.requires_grad / grad / grad_fn / is_leaf / backward / detach, the
// grad_fn node objects, grad mode, and the engine entry points behind bessemer.autograd.
#include "autograd/engine.h"
#include "autograd/inplace.h"
#include "autograd/record.h"
#include "bindings/common.h"
#include "core/errors.h"

namespace bm::bind {

namespace {

std::vector<TensorPtr> tensor_list(const py::handle& obj) {
  if (obj.is_none()) return {};
  if (py::isinstance<Tensor>(obj)) return {obj.cast<TensorPtr>()};
  std::vector<TensorPtr> out;
  for (auto item : obj) {
    if (item.is_none()) out.push_back(nullptr);
    else out.push_back(item.cast<TensorPtr>());
  }
  return out;
}

void set_requires_grad(const TensorPtr& t, bool on) {
  if (on && !is_floating(t->dtype))
    throw Error("[requires_grad_] only tensors of floating point dtype can require gradients, got " +
                std::string(dtype_name(t->dtype)));
  if (!is_leaf(*t)) {
    if (!on)
      throw Error("[requires_grad_] you can only change requires_grad flags of leaf tensors; use detach() to get "
                  "a tensor without history");
    return;
  }
  if (!on && !t->autograd) return;
  autograd_meta(*t).requires_grad = on;
}

void set_grad(const TensorPtr& t, const py::object& value) {
  if (value.is_none()) {
    if (t->autograd) swap_grad(*t->autograd, nullptr);
    return;
  }
  TensorPtr g = value.cast<TensorPtr>();
  if (g->device() != t->device())
    throw DeviceMismatchError("[grad] assigned grad is on " + g->device()->name + " but the tensor is on " +
                              t->device()->name);
  if (g->dtype != t->dtype)
    throw TypeError("[grad] assigned grad has dtype " + std::string(dtype_name(g->dtype)) + " but the tensor has " +
                    dtype_name(t->dtype));
  if (g->shape != t->shape)
    throw ValueError("[grad] assigned grad has shape " + shape_str(g->shape) + " but the tensor has shape " +
                     shape_str(t->shape));
  swap_grad(autograd_meta(*t), g);
}

// A Python callable kept by C++ code that may drop it without the GIL (the engine runs without it).
struct PyCallable {
  std::shared_ptr<py::object> fn;
  explicit PyCallable(py::object f)
      : fn(new py::object(std::move(f)), [](py::object* o) {
          py::gil_scoped_acquire gil;
          delete o;
        }) {}
  template <class... A>
  void operator()(A&&... args) const {
    py::gil_scoped_acquire gil;
    (*fn)(std::forward<A>(args)...);
  }
};

// A bessemer.autograd.Function's node: its backward is Python (the class's backward, through
// autograd/function.py's wrapper, which returns one gradient or None per tensor input). The wrapper
// holds the ctx and its saved tensors; release_saved drops it after a backward without retain_graph.
class PyFunctionNode final : public Node {
 public:
  PyFunctionNode(std::string name, py::object backward) : name_(std::move(name)), fn_(std::move(backward)) {}
  std::string name() const override { return name_; }
  std::vector<TensorPtr> apply(const TensorPtr& grad) override {
    if (!fn_.fn)
      throw Error("[" + name_ + "] trying to backward through the graph a second time (or directly access saved "
                  "tensors after they have already been freed); specify retain_graph=True the first time");
    py::gil_scoped_acquire gil;
    py::object r = (*fn_.fn)(py::cast(grad));
    std::vector<TensorPtr> out(next.size());
    size_t i = 0;
    for (auto item : r) {
      if (i < out.size() && !item.is_none() && next[i].valid()) out[i] = item.cast<TensorPtr>();
      ++i;
    }
    return out;
  }
  void release_saved() override { fn_.fn.reset(); }  // PyCallable's deleter takes the GIL

 private:
  std::string name_;
  PyCallable fn_;
};

}  // namespace

void init_autograd(py::module_& m) {
  py::class_<Node, std::shared_ptr<Node>>(m, "Node", "A step of a recorded graph (a tensor's grad_fn).")
      .def("name", &Node::name)
      .def_property_readonly("next_functions", [](const Node& n) {
        py::list out;
        for (const Edge& e : n.next) out.append(py::make_tuple(e.fn ? py::cast(e.fn) : py::none(), 0));
        return py::tuple(out);
      })
      .def("__repr__", [](const Node& n) {
        std::ostringstream s;
        s << "<" << n.name() << " object at " << static_cast<const void*>(&n) << ">";
        return s.str();
      });

  auto cls = py::reinterpret_borrow<py::class_<Tensor, TensorPtr>>(m.attr("Tensor"));
  cls.def_property("requires_grad", [](const Tensor& t) { return requires_grad(t); },
                   [](const TensorPtr& t, bool on) { set_requires_grad(t, on); })
      .def("requires_grad_", [](const TensorPtr& t, bool on) { set_requires_grad(t, on); return t; },
           py::arg("requires_grad") = true)
      .def_property("grad", [](const Tensor& t) -> py::object {
        TensorPtr g = grad_of(t);
        if (!g) return py::none();
        return py::cast(g);
      }, &set_grad)
      .def_property_readonly("grad_fn", [](const Tensor& t) -> py::object {
        if (!t.autograd || !t.autograd->grad_fn) return py::none();
        return py::cast(t.autograd->grad_fn);
      })
      .def_property_readonly("is_leaf", [](const Tensor& t) { return is_leaf(t); })
      .def_property_readonly("retains_grad", [](const Tensor& t) { return t.autograd && t.autograd->retains_grad; })
      .def_property_readonly("_version", [](const Tensor& t) { return t.storage->version.load(); })
      .def("retain_grad", [](const TensorPtr& t) { retain_grad(t); })
      .def("detach", [](const TensorPtr& t) { return detach(t); })
      .def("detach_", [](const TensorPtr& t) {
        if (t->view_base && requires_grad(t->view_base))
          throw Error("[detach_] can't detach a view of a tensor that requires grad in place; use detach()");
        if (t->autograd) { t->autograd->grad_fn = nullptr; t->autograd->requires_grad = false; }
        return t;
      });

  m.def("_add_post_accumulate_hook", [](const TensorPtr& t, py::object fn) {
    // The hook receives the tensor; it holds it weakly, or the tensor would keep itself alive.
    std::weak_ptr<Tensor> leaf = t;
    PyCallable call(std::move(fn));
    return add_post_accumulate_hook(t, [leaf, call] {
      if (TensorPtr p = leaf.lock()) {
        py::gil_scoped_acquire gil;
        call(py::cast(p));
      }
    });
  }, py::arg("tensor"), py::arg("hook"));
  m.def("_remove_post_accumulate_hook", [](const TensorPtr& t, uint64_t id) {
    py::gil_scoped_release nogil;  // the dropped hook takes the GIL to release its callable
    remove_post_accumulate_hook(t, id);
  }, py::arg("tensor"), py::arg("id"));
  m.def("_record_function", [](const std::string& name, const py::object& inputs, const TensorPtr& out,
                                py::object backward) {
    // Called by Function.apply once forward has run (under no_grad): `out` (a fresh tensor without
    // history) becomes the output of a node whose edges are the floating inputs that require grad.
    if (!is_floating(out->dtype))
      throw TypeError("[" + name + "] only a floating point output can have a gradient, forward returned " +
                      std::string(dtype_name(out->dtype)));
    if (!is_leaf(*out) || requires_grad(out))
      throw Error("[" + name + "] the output already has a history");
    attach(std::make_shared<PyFunctionNode>(name, std::move(backward)), tensor_list(inputs), out);
  }, py::arg("name"), py::arg("inputs"), py::arg("output"), py::arg("backward"));
  m.def("_queue_backward_callback", [](py::object fn) {
    queue_backward_callback([call = PyCallable(std::move(fn))] { call(); });
  }, py::arg("callback"));
  m.def("is_grad_enabled", &grad_enabled);
  m.def("_live_storages", [] { return Storage::live_count().load(); },
        "How many storages (tensor memory blocks) are alive: tests check it stays flat over training steps.");
  m.def("_set_grad_enabled", &set_grad_enabled, py::arg("mode"));
  m.def("_run_backward", [](const py::object& tensors, const py::object& grads, bool retain_graph, bool create_graph,
                            const py::object& inputs) {
    std::vector<TensorPtr> ts = tensor_list(tensors), gs = tensor_list(grads), in = tensor_list(inputs);
    bool any = false;
    for (auto& g : gs) any |= bool(g);
    if (!any) gs.clear();
    py::gil_scoped_release nogil;
    run_backward(ts, gs, retain_graph, create_graph, in);
  }, py::arg("tensors"), py::arg("grad_tensors"), py::arg("retain_graph"), py::arg("create_graph"),
     py::arg("inputs") = py::none());
  m.def("_run_grad", [](const py::object& outputs, const py::object& grads, const py::object& inputs,
                        bool retain_graph, bool create_graph, bool allow_unused) {
    std::vector<TensorPtr> os = tensor_list(outputs), gs = tensor_list(grads), in = tensor_list(inputs);
    bool any = false;
    for (auto& g : gs) any |= bool(g);
    if (!any) gs.clear();
    std::vector<TensorPtr> r;
    {
      py::gil_scoped_release nogil;
      r = run_grad(os, gs, in, retain_graph, create_graph, allow_unused);
    }
    py::list out;
    for (auto& g : r) out.append(g ? py::cast(g) : py::none());
    return py::tuple(out);
  });
  init_inplace(m, cls);
}

}  // namespace bm::bind
