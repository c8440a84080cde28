// The schedule cache: the same tensor graph on other buffers skips scheduling (tinygrad schedule/__init__.py).
// The key is the content key of the outputs with every storage leaf replaced by a placeholder PARAM numbered in
// order of first appearance, so buffer identity is a parameter and structure alone decides a hit. A hit
// re-creates every intermediate buffer and arena: two schedules never share scratch storage.
#pragma once
#include <cstddef>

namespace doorbell {

size_t schedule_cache_size();
void clear_schedule_cache();
// SCACHE=0 in the environment turns the cache off; tests may switch it here.
void set_schedule_cache_enabled(bool enabled);
bool schedule_cache_enabled();

}  // namespace doorbell
