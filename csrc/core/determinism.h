// bm.use_deterministic_algorithms (torch's name and meaning). Every kernel in the registry gives
// the same bits run after run today (docs/determinism.md says why, op by op), so the flag changes
// no result: it is the guard for a kernel whose fast path is not deterministic (float atomics,
// a split reduction whose merge order depends on timing). Such a kernel is listed in op_table.h's
// BM_NONDETERMINISTIC_OPS; with the flag on, the dispatcher raises for it (or warns, warn_only).
#pragma once
#include <cstdint>
#include <string>

#include "core/device.h"
#include "core/op_registry.h"

namespace bm {

void set_deterministic_algorithms(bool on, bool warn_only);
bool deterministic_algorithms_enabled();
bool deterministic_warn_only();

// The dispatcher's check (called when the flag is on), before the kernel runs: with the flag on and no deterministic kernel for
// `op` on `dev`, raises Error ("[op] does not have a deterministic implementation on <device>...")
// or, with warn_only, emits that message as a warning through the hook below.
void check_deterministic(OpId op, const Device& dev);

// Whether `op`'s kernel on devices of type `t` is not deterministic (BM_NONDETERMINISTIC_OPS).
bool nondeterministic_on(OpId op, DeviceType t);
// Tests mark a row so the check can be seen to fire (a control: no real row needs it today).
void set_nondeterministic_for_testing(OpId op, DeviceType t, bool on);

// How a warning reaches the user: the bindings install Python's warnings.warn (UserWarning). The
// hook may throw (a warnings filter set to "error"). Without a hook the message goes to stderr.
using WarningHook = void (*)(const std::string& message);
void set_warning_hook(WarningHook hook);

}  // namespace bm
