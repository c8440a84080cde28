// The floors `doorbell bench` compares doorbell's CPU kernels with: what this machine does with plain C++ over the
// same threads (STREAM-like loops: its memory bandwidth) and with a BLAS (OpenBLAS's cblas_sgemm, loaded at run
// time so that nothing links it). Independent of doorbell's stack on purpose: a floor must not share a bug or a
// slowness with what it measures.
//
// Every floor returns the wall time in ns (steady_clock) of one run and can be repeated. Buffers are allocated
// outside the timed region, 64-byte aligned (2 MiB with transparent huge pages asked for when big, as doorbell's
// CPU allocator does), and first-touched by the pool's threads over the same contiguous chunks the loops use, so
// pages are spread over the threads as doorbell's kernels spread theirs.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace doorbell::bench {

// A small persistent pool: `threads` threads counting the caller (it runs chunk 0), created once and reused. One
// run wakes all, runs fn(index, count) on each, and returns when all returned. Workers spin briefly before
// sleeping, so back-to-back runs (repetitions) do not pay a wake-up from sleep each.
class ThreadPool {
 public:
  explicit ThreadPool(unsigned threads = 0);  // 0: std::thread::hardware_concurrency()
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return count_; }
  void run(const std::function<void(unsigned index, unsigned count)>& fn);

 private:
  void worker_loop(unsigned index);

  unsigned count_ = 1;
  std::vector<std::thread> workers_;
  const std::function<void(unsigned, unsigned)>* job_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  std::atomic<unsigned> remaining_{0};
  std::atomic<bool> stop_{false};
};

// [begin, end) of chunk `index` of `count` over n elements: contiguous, boundaries on 64-byte lines (16 floats).
std::pair<size_t, size_t> chunk_of(size_t n, unsigned index, unsigned count);

// float32 storage, 64-byte aligned.
struct FloatBuffer {
  struct Free {
    void operator()(float* p) const;
  };
  std::unique_ptr<float[], Free> data;
  size_t size = 0;
  float* get() const { return data.get(); }
};

class Floors {
 public:
  explicit Floors(unsigned threads = 0);  // 0: std::thread::hardware_concurrency()
  ~Floors();

  unsigned threads() const { return pool_.size(); }
  ThreadPool& pool() { return pool_; }

  // n floats, zeroed by the pool's threads chunk by chunk (first touch).
  FloatBuffer allocate(size_t n);
  // dst[i] = src[i] for all i, by the pool's threads (untimed: puts the same numbers in a floor's buffer).
  void fill(FloatBuffer& dst, const std::vector<float>& src);

  // b[i] = a[i] * s: reads one stream, writes one.
  int64_t copy_scale(const float* a, float* b, size_t n, float s);
  // d[i] = a[i] * b[i] + c[i]: reads three streams, writes one.
  int64_t triad3(const float* a, const float* b, const float* c, float* d, size_t n);
  // The sum of a[0..n): per-thread partial sums (float, vectorized) combined in double; the sum goes to *result.
  int64_t sum(const float* a, size_t n, double* result);

  // OpenBLAS, loaded at first use: C (m x n) = A (m x k) @ B (k x n), row-major, no transpose, with threads() threads.
  bool sgemm_available();
  const std::string& sgemm_unavailable_reason();  // which libraries were tried and why they failed
  // Throws std::runtime_error naming the library when OpenBLAS is unavailable.
  int64_t sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c);
  // As sgemm, untimed: for checks.
  void sgemm_untimed(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c);

 private:
  void load_openblas();

  ThreadPool pool_;
  bool blas_tried_ = false;
  void* blas_handle_ = nullptr;
  void* blas_sgemm_ = nullptr;
  std::string blas_reason_;
  std::vector<double> partials_;
};

}  // namespace doorbell::bench
