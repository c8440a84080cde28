#include "tools/bench_floors.h"

#include <dlfcn.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <new>
#include <stdexcept>

#include "tools/bench_loops.h"

namespace doorbell::bench {
namespace {

constexpr auto kSpinFor = std::chrono::microseconds(200);  // how long a worker polls before sleeping
constexpr size_t kLineFloats = 16;                         // 64-byte lines
constexpr size_t kHugePage = size_t{2} << 20;

int64_t ns_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

// cblas_sgemm's and openblas_set_num_threads's C signatures; the enum values are CBLAS's (cblas.h).
using CblasSgemm = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a,
                            int lda, const float* b, int ldb, float beta, float* c, int ldc);
using OpenblasSetNumThreads = void (*)(int);
constexpr int kCblasRowMajor = 101, kCblasNoTrans = 111;

}  // namespace

ThreadPool::ThreadPool(unsigned threads) {
  count_ = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 1; i < count_; i++) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(1);
  generation_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::worker_loop(unsigned index) {
  uint64_t seen = 0;
  while (true) {
    auto spin_until = std::chrono::steady_clock::now() + kSpinFor;
    uint64_t g = generation_.load(std::memory_order_acquire);
    while (g == seen && std::chrono::steady_clock::now() < spin_until) g = generation_.load(std::memory_order_acquire);
    if (g == seen) {
      generation_.wait(seen, std::memory_order_acquire);
      continue;
    }
    seen = g;
    if (stop_.load()) return;
    (*job_)(index, count_);
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) remaining_.notify_one();
  }
}

void ThreadPool::run(const std::function<void(unsigned, unsigned)>& fn) {
  job_ = &fn;
  remaining_.store(count_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  fn(0, count_);
  // Spin first: the other chunks usually finish within microseconds of this one.
  auto spin_until = std::chrono::steady_clock::now() + kSpinFor;
  while (remaining_.load(std::memory_order_acquire) != 0 && std::chrono::steady_clock::now() < spin_until) {
  }
  for (unsigned r = remaining_.load(std::memory_order_acquire); r != 0; r = remaining_.load(std::memory_order_acquire))
    remaining_.wait(r, std::memory_order_acquire);
}

std::pair<size_t, size_t> chunk_of(size_t n, unsigned index, unsigned count) {
  size_t lines = (n + kLineFloats - 1) / kLineFloats;
  size_t per = (lines + count - 1) / count;
  size_t begin = std::min(n, index * per * kLineFloats);
  size_t end = std::min(n, (index + 1) * per * kLineFloats);
  return {begin, end};
}

void FloatBuffer::Free::operator()(float* p) const { std::free(p); }

Floors::Floors(unsigned threads) : pool_(threads), partials_(pool_.size()) {}

Floors::~Floors() {
  if (blas_handle_) dlclose(blas_handle_);
}

FloatBuffer Floors::allocate(size_t n) {
  // As doorbell's CPU allocator does (hcq/cpu/cpu_allocator.cpp): big buffers on 2 MiB boundaries with transparent
  // huge pages asked for, so the floor does not pay TLB misses the kernels it is compared with do not.
  const bool huge = n * sizeof(float) >= kHugePage;
  const size_t align = huge ? kHugePage : 64;
  size_t bytes = std::max<size_t>(align, (n * sizeof(float) + align - 1) / align * align);
  auto* p = static_cast<float*>(std::aligned_alloc(align, bytes));
  if (p == nullptr) throw std::bad_alloc();
  if (huge) ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: without THP the pages are 4 KiB
  FloatBuffer buffer{std::unique_ptr<float[], FloatBuffer::Free>(p), n};
  pool_.run([&](unsigned index, unsigned count) {
    auto [begin, end] = chunk_of(n, index, count);
    loop_fill(p + begin, nullptr, end - begin);
  });
  return buffer;
}

void Floors::fill(FloatBuffer& dst, const std::vector<float>& src) {
  if (src.size() != dst.size)
    throw std::invalid_argument("Floors::fill: expected " + std::to_string(dst.size) + " floats, got " +
                                std::to_string(src.size()));
  pool_.run([&](unsigned index, unsigned count) {
    auto [begin, end] = chunk_of(src.size(), index, count);
    loop_fill(dst.get() + begin, src.data() + begin, end - begin);
  });
}

int64_t Floors::copy_scale(const float* a, float* b, size_t n, float s) {
  auto t0 = std::chrono::steady_clock::now();
  pool_.run([&](unsigned index, unsigned count) {
    auto [begin, end] = chunk_of(n, index, count);
    loop_copy_scale(a + begin, b + begin, end - begin, s);
  });
  return ns_between(t0, std::chrono::steady_clock::now());
}

int64_t Floors::triad3(const float* a, const float* b, const float* c, float* d, size_t n) {
  auto t0 = std::chrono::steady_clock::now();
  pool_.run([&](unsigned index, unsigned count) {
    auto [begin, end] = chunk_of(n, index, count);
    loop_triad3(a + begin, b + begin, c + begin, d + begin, end - begin);
  });
  return ns_between(t0, std::chrono::steady_clock::now());
}

int64_t Floors::sum(const float* a, size_t n, double* result) {
  auto t0 = std::chrono::steady_clock::now();
  pool_.run([&](unsigned index, unsigned count) {
    auto [begin, end] = chunk_of(n, index, count);
    partials_[index] = loop_sum(a + begin, end - begin);
  });
  double total = 0;
  for (double p : partials_) total += p;
  int64_t ns = ns_between(t0, std::chrono::steady_clock::now());
  if (result) *result = total;
  return ns;
}

void Floors::load_openblas() {
  if (blas_tried_) return;
  blas_tried_ = true;
  // The versioned name first: the unversioned one exists only with the -dev package.
  for (const char* name : {"libopenblas.so.0", "libopenblas.so"}) {
    void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      blas_reason_ += std::string(blas_reason_.empty() ? "" : "; ") + name + ": " + (why ? why : "dlopen failed");
      continue;
    }
    void* sgemm = dlsym(handle, "cblas_sgemm");
    void* set_threads = dlsym(handle, "openblas_set_num_threads");
    if (sgemm == nullptr || set_threads == nullptr) {
      blas_reason_ += std::string(blas_reason_.empty() ? "" : "; ") + name +
                      ": expected symbols cblas_sgemm and openblas_set_num_threads";
      dlclose(handle);
      continue;
    }
    // Same thread count as the other floors and as doorbell's CPU device (one per core).
    reinterpret_cast<OpenblasSetNumThreads>(set_threads)(static_cast<int>(threads()));
    blas_handle_ = handle;
    blas_sgemm_ = sgemm;
    blas_reason_.clear();
    return;
  }
}

bool Floors::sgemm_available() {
  load_openblas();
  return blas_sgemm_ != nullptr;
}

const std::string& Floors::sgemm_unavailable_reason() {
  load_openblas();
  return blas_reason_;
}

void Floors::sgemm_untimed(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  if (!sgemm_available()) throw std::runtime_error("sgemm floor: OpenBLAS unavailable (" + blas_reason_ + ")");
  auto fn = reinterpret_cast<CblasSgemm>(blas_sgemm_);
  fn(kCblasRowMajor, kCblasNoTrans, kCblasNoTrans, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f,
     a, static_cast<int>(k), b, static_cast<int>(n), 0.0f, c, static_cast<int>(n));
}

int64_t Floors::sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  if (!sgemm_available()) throw std::runtime_error("sgemm floor: OpenBLAS unavailable (" + blas_reason_ + ")");
  auto t0 = std::chrono::steady_clock::now();
  sgemm_untimed(m, n, k, a, b, c);
  return ns_between(t0, std::chrono::steady_clock::now());
}

}  // namespace doorbell::bench
