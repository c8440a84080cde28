// The HCQ contract on the CPU device: parallel exec over workers, ordering through signals and waits, host-set
// signals, copies, timestamps, replay with patches, the timeline, and clean shutdown.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "hcq/cpu/cpu_device.h"
#include "hcq/wait_primitives.h"

namespace doorbell {
namespace {

using namespace std::chrono_literals;

// buffers[0]: int32 slots, one per core; each core adds core_id + 1 to its slot (so a slot written twice shows).
void write_core_id(void* const* buffers, const int64_t*, int32_t core_id, int32_t) {
  static_cast<int32_t*>(buffers[0])[core_id] += core_id + 1;
}

// buffers[0]: the thread id of each core's call.
void record_thread(void* const* buffers, const int64_t*, int32_t core_id, int32_t) {
  static_cast<std::thread::id*>(buffers[0])[core_id] = std::this_thread::get_id();
}

// buffers[0] (int64[scalars[0]]): out[i] = scalars[1] * i + scalars[1]; each core fills a contiguous share.
void fill_affine(void* const* buffers, const int64_t* scalars, int32_t core_id, int32_t core_count) {
  const int64_t n = scalars[0];
  const int64_t begin = n * core_id / core_count;
  const int64_t end = n * (core_id + 1) / core_count;
  auto* out = static_cast<int64_t*>(buffers[0]);
  for (int64_t i = begin; i < end; ++i) out[i] = scalars[1] * i + scalars[1];
}

// buffers[1] = buffers[0] * 2 over scalars[0] int64 elements, split across cores.
void double_it(void* const* buffers, const int64_t* scalars, int32_t core_id, int32_t core_count) {
  const int64_t n = scalars[0];
  const int64_t begin = n * core_id / core_count;
  const int64_t end = n * (core_id + 1) / core_count;
  const auto* in = static_cast<const int64_t*>(buffers[0]);
  auto* out = static_cast<int64_t*>(buffers[1]);
  for (int64_t i = begin; i < end; ++i) out[i] = in[i] * 2;
}

// Counts its calls in an atomic; the count tells the test how many kernels ran.
void count_call(void* const* buffers, const int64_t*, int32_t, int32_t) {
  static_cast<std::atomic<int64_t>*>(buffers[0])->fetch_add(1, std::memory_order_relaxed);
}

// buffers[0]: int64 per core: the monotonic_ns() time at which that core's call ran.
void record_time(void* const* buffers, const int64_t*, int32_t core_id, int32_t) {
  static_cast<int64_t*>(buffers[0])[core_id] = monotonic_ns();
}

void busy_kernel(void* const* buffers, const int64_t*, int32_t core_id, int32_t) {
  // Enough work that the exec takes a measurable time; the result is kept so it is not optimized away.
  double x = core_id;
  for (int i = 0; i < 20000; ++i) x = x * 0.999 + 1.0;
  static_cast<double*>(buffers[0])[core_id] = x;
}

// Throws on the core named by scalars[0] (core 0 runs on the dispatcher, the others on workers); every other core
// counts its call in buffers[0].
void throw_on_one_core(void* const* buffers, const int64_t* scalars, int32_t core_id, int32_t) {
  if (core_id == scalars[0]) throw std::runtime_error("boom on core " + std::to_string(core_id));
  static_cast<std::atomic<int64_t>*>(buffers[0])->fetch_add(1, std::memory_order_relaxed);
}

void throw_an_int(void* const*, const int64_t*, int32_t, int32_t) { throw 42; }

TEST(CpuDevice, HasAWorkerPerCoreByDefaultAndTheRequestedCountOtherwise) {
  CpuDevice dflt;
  const unsigned hw = std::thread::hardware_concurrency();
  EXPECT_EQ(dflt.worker_count(), hw == 0 ? 1u : hw);
  CpuDevice three(CpuDeviceOptions{.workers = 3});
  EXPECT_EQ(three.worker_count(), 3u);
  EXPECT_EQ(three.name(), "CPU");
}

TEST(CpuDevice, ExecRunsOnEveryWorkerAndWritesEachSlotOnce) {
  CpuDevice dev(CpuDeviceOptions{.workers = 4});
  std::vector<int32_t> slots(4, 0);
  Signal& done = dev.new_signal("done");
  HWQueue q;
  q.exec(write_core_id, {slots.data()}).signal(done, 1).submit(dev);
  done.wait(1, 10'000ms);
  EXPECT_EQ(slots, (std::vector<int32_t>{1, 2, 3, 4}));
}

// buffers[0]: the thread id of each core's call; buffers[1]: std::atomic<int32_t> arrivals. Each core id records
// its thread, then waits (at most 10 s) until every core id arrived: they can only all finish if they run at once.
void rendezvous(void* const* buffers, const int64_t*, int32_t core_id, int32_t core_count) {
  static_cast<std::thread::id*>(buffers[0])[core_id] = std::this_thread::get_id();
  auto& arrived = *static_cast<std::atomic<int32_t>*>(buffers[1]);
  arrived.fetch_add(1);
  const int64_t deadline = monotonic_ns() + 10'000'000'000;
  while (arrived.load() < core_count && monotonic_ns() < deadline) std::this_thread::yield();
}

TEST(CpuDevice, ExecCoreIdsThatWaitForEachOtherRunAtOnceOnDistinctThreads) {
  CpuDevice dev(CpuDeviceOptions{.workers = 4});
  std::array<std::thread::id, 4> ids{};
  std::atomic<int32_t> arrived{0};
  Signal& done = dev.new_signal("done");
  HWQueue q;
  q.exec(rendezvous, {ids.data(), &arrived}).signal(done, 1).submit(dev);
  done.wait(1, 30'000ms);
  EXPECT_EQ(arrived.load(), 4);
  const std::set<std::thread::id> distinct(ids.begin(), ids.end());
  EXPECT_EQ(distinct.size(), 4u);
  EXPECT_EQ(distinct.count(std::thread::id{}), 0u);
}

// buffers[0]: int32 flags, one per core id; buffers[1]: thread ids. Core ids below scalars[0] wait (at most 10 s)
// for the last core id to have run and then store 2 when it had, 1 when not; the others store 1.
void wait_for_last_core(void* const* buffers, const int64_t* scalars, int32_t core_id, int32_t core_count) {
  auto* flags = static_cast<std::atomic<int32_t>*>(buffers[0]);
  static_cast<std::thread::id*>(buffers[1])[core_id] = std::this_thread::get_id();
  if (core_id >= scalars[0]) {
    flags[core_id].store(1);
    return;
  }
  const int64_t deadline = monotonic_ns() + 10'000'000'000;
  while (flags[core_count - 1].load() == 0 && monotonic_ns() < deadline) std::this_thread::yield();
  flags[core_id].store(flags[core_count - 1].load() + 1);
}

// Core ids are claimed by whichever thread is free: the dispatcher blocked in core 0 does not hold back core 2 (a
// fixed share per thread put cores 0 and 2 on the dispatcher, one after the other).
TEST(CpuDevice, ACoreIdIsNotHeldBackBehindABlockedOneOnTheSameThread) {
  CpuDevice dev(CpuDeviceOptions{.workers = 2});
  std::array<std::atomic<int32_t>, 3> flags{};
  std::array<std::thread::id, 3> ids{};
  Signal& done = dev.new_signal("done");
  HWQueue q;
  const std::array<int64_t, 1> blocking{1};
  const std::array<void*, 2> bufs{flags.data(), ids.data()};
  q.exec(wait_for_last_core, bufs, blocking, 3).signal(done, 1).submit(dev);
  done.wait(1, 30'000ms);
  EXPECT_EQ(flags[0].load(), 2) << "core 0 gave up waiting for core 2";
  EXPECT_EQ(flags[1].load(), 1);
  EXPECT_EQ(flags[2].load(), 1);
}

// Two device threads, three core ids of which two block until the third ran: only a third thread, the host thread
// waiting on the exec's signal, can run it. The dispatcher holds the ring (`started` shows it took the submission,
// whose wait on `gate` a waiting host thread would not run), so the host can only help with core ids.
TEST(CpuDevice, AHostThreadWaitingOnTheDeviceRunsCoreIdsTheDeviceThreadsCannot) {
  // Unpinned, so that the host may help wherever it runs (pinned, it claims core ids only off the device's CPUs);
  // helping asked for, since by default a waiter helps only where the device's threads leave it no core.
  CpuDevice dev(CpuDeviceOptions{.workers = 2, .pin_threads = false, .waiters_help = 1});
  std::array<std::atomic<int32_t>, 3> flags{};
  std::array<std::thread::id, 3> ids{};
  Signal& started = dev.new_signal("started");
  Signal& gate = dev.new_signal("gate");
  Signal& done = dev.new_signal("done");
  HWQueue q;
  const std::array<int64_t, 1> blocking{2};
  const std::array<void*, 2> bufs{flags.data(), ids.data()};
  q.signal(started, 1).wait(gate, 1).exec(wait_for_last_core, bufs, blocking, 3).signal(done, 1).submit(dev);
  started.wait(1, 10'000ms);
  gate.set(1);
  done.wait(1, 30'000ms);
  EXPECT_EQ(flags[0].load(), 2);
  EXPECT_EQ(flags[1].load(), 2);
  const std::set<std::thread::id> distinct(ids.begin(), ids.end());
  EXPECT_EQ(distinct.size(), 3u);
  EXPECT_EQ(distinct.count(std::this_thread::get_id()), 1u);
}

// A waiting host thread runs submissions only when they cannot block: one whose wait has not passed is left to the
// dispatcher (the host may be the thread that would pass it), and the host's wait times out instead of hanging.
TEST(CpuDevice, AWaitingHostThreadLeavesASubmissionWithAPendingWaitToTheDispatcher) {
  CpuDevice dev(CpuDeviceOptions{.workers = 2});
  Signal& gate = dev.new_signal("gate");
  Signal& done = dev.new_signal("done");
  std::vector<int32_t> slots(2, 0);
  HWQueue q;
  q.wait(gate, 1).exec(write_core_id, {slots.data()}).signal(done, 1).submit(dev);
  EXPECT_FALSE(done.wait_for(1, 50ms));
  gate.set(1);
  done.wait(1, 10'000ms);
  EXPECT_EQ(slots, (std::vector<int32_t>{1, 2}));
}

// Host threads submitting and waiting at once (each helps with whatever is in flight): every core id of every
// exec runs exactly once, and nothing deadlocks.
TEST(CpuDevice, ManyThreadsSubmittingAndWaitingRunEveryCoreIdExactlyOnce) {
  constexpr int kThreads = 6;
  constexpr int kRounds = 300;
  constexpr int kCores = 5;
  CpuDevice dev(CpuDeviceOptions{.workers = 3});
  std::vector<std::vector<int32_t>> slots(kThreads, std::vector<int32_t>(kCores, 0));
  std::vector<Signal*> done;
  for (int t = 0; t < kThreads; ++t) done.push_back(&dev.new_signal("done" + std::to_string(t)));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 1; r <= kRounds; ++r) {
        std::vector<int32_t> once(kCores, 0);
        HWQueue q;
        q.exec(write_core_id, {once.data()}, kCores).signal(*done[t], static_cast<uint64_t>(r)).submit(dev);
        done[t]->wait(static_cast<uint64_t>(r), 30'000ms);
        for (int c = 0; c < kCores; ++c) slots[t][c] += once[c] == c + 1 ? 1 : 1000;
      }
    });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(slots[t], std::vector<int32_t>(kCores, kRounds)) << "thread " << t;
}

// By default a waiter helps exactly where it would otherwise spin beside the device's threads on a shared core: the
// device's threads and one host thread do not fit on the machine's cores. Asked for, helping is on or off anywhere.
TEST(CpuDevice, AWaiterHelpsByDefaultOnlyWhereTheDevicesThreadsLeaveItNoCore) {
  const uint32_t cores = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_TRUE(CpuDevice(CpuDeviceOptions{.workers = cores}).waiters_help()) << cores << " workers on " << cores << " cores";
  if (cores >= 2) {
    EXPECT_FALSE(CpuDevice(CpuDeviceOptions{.workers = cores - 1}).waiters_help()) << cores - 1 << " workers on " << cores << " cores";
  }
  EXPECT_TRUE(CpuDevice(CpuDeviceOptions{.workers = 1, .waiters_help = 1}).waiters_help());
  EXPECT_FALSE(CpuDevice(CpuDeviceOptions{.workers = cores + 1, .waiters_help = 0}).waiters_help());
  try {
    CpuDevice bad(CpuDeviceOptions{.workers = 1, .waiters_help = 2});
    ADD_FAILURE() << "waiters_help 2 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "CpuDevice: waiters_help 2; expected -1 (when the device's threads leave the waiter no core), 0 or 1");
  }
}

TEST(CpuDevice, MoreCoresThanWorkersStillRunsEveryCoreIdOnce) {
  CpuDevice dev(CpuDeviceOptions{.workers = 3});
  std::vector<int32_t> slots(10, 0);
  Signal& done = dev.new_signal("done");
  HWQueue q;
  q.exec(write_core_id, {slots.data()}, 10).signal(done, 1).submit(dev);
  done.wait(1, 10'000ms);
  std::vector<int32_t> expected(10);
  std::iota(expected.begin(), expected.end(), 1);
  EXPECT_EQ(slots, expected);
}

TEST(CpuDevice, OneThreadDeviceRunsEveryCoreIdOnOneThread) {
  CpuDevice dev(CpuDeviceOptions{.workers = 1});
  std::vector<int32_t> slots(5, 0);
  std::array<std::thread::id, 5> ids{};
  Signal& done = dev.new_signal("done");
  HWQueue q;
  q.exec(write_core_id, {slots.data()}, 5).exec(record_thread, {ids.data()}, 5).signal(done, 1).submit(dev);
  done.wait(1, 10'000ms);
  EXPECT_EQ(slots, (std::vector<int32_t>{1, 2, 3, 4, 5}));
  // One thread runs them all: the dispatcher, or the host thread waiting on `done` when it took the ring first.
  const std::set<std::thread::id> distinct(ids.begin(), ids.end());
  EXPECT_EQ(distinct.size(), 1u);
}

// Producer exec A writes and signals; a second queue waits on that signal, then exec B reads A's output. Runs
// `iterations` rounds; with `consumer_first` the consumer is submitted before the producer, which only another
// ring can make progress on (a device runs its ring in order, as a GPU queue does).
void run_producer_consumer(Device& producer_dev, Device& consumer_dev, bool consumer_first, uint64_t iterations) {
  constexpr int64_t kN = 1000;
  std::vector<int64_t> a(kN);
  std::vector<int64_t> b(kN);
  Signal& a_done = producer_dev.new_signal("a_done");
  Signal& b_done = consumer_dev.new_signal("b_done");
  for (uint64_t iter = 1; iter <= iterations; ++iter) {
    const int64_t k = static_cast<int64_t>(iter);
    std::array<void*, 1> a_bufs{a.data()};
    std::array<int64_t, 2> a_args{kN, k};
    std::array<void*, 2> b_bufs{a.data(), b.data()};
    std::array<int64_t, 1> b_args{kN};
    HWQueue producer;
    producer.exec(fill_affine, a_bufs, a_args).signal(a_done, iter);
    HWQueue consumer;
    consumer.wait(a_done, iter).exec(double_it, b_bufs, b_args).signal(b_done, iter);
    if (consumer_first) {
      consumer.submit(consumer_dev);
      producer.submit(producer_dev);
    } else {
      producer.submit(producer_dev);
      consumer.submit(consumer_dev);
    }
    b_done.wait(iter, 10'000ms);
    for (int64_t i = 0; i < kN; ++i) ASSERT_EQ(b[i], 2 * (k * i + k)) << "iteration " << iter << " element " << i;
  }
}

TEST(CpuDevice, SecondQueueWaitsOnSignalThenReadsFirstQueuesOutput) {
  CpuDevice dev(CpuDeviceOptions{.workers = 4});
  run_producer_consumer(dev, dev, /*consumer_first=*/false, 200);
}

TEST(CpuDevice, QueueOnAnotherDeviceWaitsForTheProducersSignal) {
  // The consumer is submitted first, on its own device: only its wait keeps B from reading A before A ran.
  CpuDevice producer(CpuDeviceOptions{.workers = 2});
  CpuDevice consumer(CpuDeviceOptions{.workers = 2});
  run_producer_consumer(producer, consumer, /*consumer_first=*/true, 200);
}

TEST(CpuDevice, WaitOnHostSetSignalBlocksExecutionUntilSet) {
  CpuDevice dev(CpuDeviceOptions{.workers = 2});
  Signal& gate = dev.new_signal("gate");
  Signal& done = dev.new_signal("done");
  std::atomic<int64_t> calls{0};
  HWQueue q;
  q.wait(gate, 1).exec(count_call, {&calls}, 1).signal(done, 1).submit(dev);
  // Long enough that the dispatcher has spun out and sleeps in the wait.
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(calls.load(), 0);
  EXPECT_EQ(done.value(), 0u);
  std::thread host([&] { gate.set(1); });
  done.wait(1, 10'000ms);
  host.join();
  EXPECT_EQ(calls.load(), 1);
}

TEST(CpuDevice, CopyCommandCopiesBytesInOrder) {
  CpuDevice dev(CpuDeviceOptions{.workers = 2});
  constexpr int64_t kN = 257;
  std::vector<int64_t> src(kN);
  std::vector<int64_t> mid(kN, -1);
  std::vector<int64_t> dst(kN, -1);
  std::array<int64_t, 2> args{kN, 3};
  std::array<void*, 1> bufs{src.data()};
  Signal& done = dev.new_signal("done");
  HWQueue q;
  // exec writes src, copy moves it to mid, a second copy to dst: each sees the previous command's result.
  q.exec(fill_affine, bufs, args).copy(mid.data(), src.data(), kN * sizeof(int64_t))
      .copy(dst.data(), mid.data(), kN * sizeof(int64_t)).signal(done, 1).submit(dev);
  done.wait(1, 10'000ms);
  for (int64_t i = 0; i < kN; ++i) ASSERT_EQ(dst[i], 3 * i + 3) << i;
}

TEST(CpuDevice, TimestampsBracketTheExecAndAreMonotonic) {
  CpuDevice dev(CpuDeviceOptions{.workers = 2});
  Signal& start = dev.new_signal("start");
  Signal& end = dev.new_signal("end");
  Signal& done = dev.new_signal("done");
  std::array<double, 2> out{};
  std::atomic<int64_t> calls{0};
  HWQueue q;
  q.timestamp(start).exec(busy_kernel, {out.data()}).timestamp(end).exec(count_call, {&calls}, 1).signal(done, 1);
  q.submit(dev);
  done.wait(1, 10'000ms);
  EXPECT_GT(start.timestamp(), 0u);
  EXPECT_GE(end.timestamp(), start.timestamp());
  // The signal command comes after the end timestamp, so its own timestamp is not earlier.
  EXPECT_GE(done.timestamp(), end.timestamp());
  EXPECT_EQ(start.value(), 0u);
  EXPECT_EQ(calls.load(), 1);
}

TEST(CpuDevice, TimestampsAroundAnExecBracketEveryCoresRun) {
  CpuDevice dev(CpuDeviceOptions{.workers = 3});
  Signal& start = dev.new_signal("start");
  Signal& end = dev.new_signal("end");
  std::array<int64_t, 3> ran{};
  HWQueue q;
  q.timestamp(start).exec(record_time, {ran.data()}).timestamp(end).signal(dev.timeline_signal(), dev.next_timeline());
  q.submit(dev);
  dev.synchronize(10'000ms);
  // The device's timestamps share the kernels' clock, so each core's reading lies between them: kernel-only time.
  for (int64_t t : ran) {
    EXPECT_LE(start.timestamp(), static_cast<uint64_t>(t));
    EXPECT_GE(end.timestamp(), static_cast<uint64_t>(t));
  }
}

TEST(CpuDevice, ReplayOfRecordedQueueWithPatchedValuesAndBuffers) {
  CpuDevice dev(CpuDeviceOptions{.workers = 3});
  constexpr int64_t kN = 64;
  std::vector<int64_t> out1(kN, 0);
  std::vector<int64_t> out2(kN, 0);
  Signal& done = dev.new_signal("done");
  std::array<void*, 1> bufs{out1.data()};
  std::array<int64_t, 2> args{kN, 1};
  HWQueue q;
  q.exec(fill_affine, bufs, args).signal(done, 1);
  q.submit(dev);
  done.wait(1, 10'000ms);
  // Patch the multiplier, the output buffer and the signal value; replay without re-recording.
  q.patch_scalar(0, 1, 5);
  q.patch_buffer(0, 0, out2.data());
  q.patch_value(1, 2);
  q.submit(dev);
  done.wait(2, 10'000ms);
  for (int64_t i = 0; i < kN; ++i) {
    ASSERT_EQ(out1[i], i + 1) << i;
    ASSERT_EQ(out2[i], 5 * i + 5) << i;
  }
}

TEST(CpuDevice, PatchingAfterSubmitDoesNotChangeTheSubmittedWork) {
  CpuDevice dev(CpuDeviceOptions{.workers = 2});
  Signal& gate = dev.new_signal("gate");
  Signal& done = dev.new_signal("done");
  std::array<int64_t, 4> out{};
  std::array<void*, 1> bufs{out.data()};
  std::array<int64_t, 2> args{4, 7};
  HWQueue q;
  q.wait(gate, 1).exec(fill_affine, bufs, args).signal(done, 1);
  q.submit(dev);
  // The submission holds its own copy, so patching the queue while it waits changes nothing already submitted.
  q.patch_scalar(1, 1, 100);
  q.patch_value(2, 99);
  gate.set(1);
  done.wait(1, 10'000ms);
  EXPECT_EQ(out, (std::array<int64_t, 4>{7, 14, 21, 28}));
  EXPECT_EQ(done.value(), 1u);
}

TEST(CpuDevice, BoundQueueResubmittedWithAPatchedArgumentRunsThePatchedValues) {
  CpuDevice dev(CpuDeviceOptions{.workers = 3});
  constexpr int64_t kN = 96;
  std::vector<int64_t> out1(kN, 0);
  std::vector<int64_t> out2(kN, 0);
  Signal& done = dev.new_signal("done");
  std::array<void*, 1> bufs{out1.data()};
  std::array<int64_t, 2> args{kN, 3};
  HWQueue q;
  q.exec(fill_affine, bufs, args).signal(done, 1).bind(dev);
  EXPECT_TRUE(q.bound());
  q.submit(dev);
  done.wait(1, 10'000ms);
  // The patches land in the bound copy the device executes from: no re-record, no re-bind.
  q.patch_scalar(0, 1, 7);
  q.patch_buffer(0, 0, out2.data());
  q.patch_value(1, 2);
  q.submit(dev);
  done.wait(2, 10'000ms);
  for (int64_t i = 0; i < kN; ++i) {
    ASSERT_EQ(out1[i], 3 * i + 3) << i;
    ASSERT_EQ(out2[i], 7 * i + 7) << i;
  }
}

TEST(CpuDevice, BoundQueueSubmittedManyTimesRunsEachSubmission) {
  CpuDevice dev(CpuDeviceOptions{.workers = 2});
  std::atomic<int64_t> calls{0};
  Signal& done = dev.new_signal("done");
  HWQueue q;
  q.exec(count_call, {&calls}).signal(done, 0).bind(dev);
  for (uint64_t i = 1; i <= 200; ++i) {
    q.patch_value(1, i);
    q.submit(dev);
    done.wait(i, 10'000ms);  // a bound queue is patched only when the device no longer runs it
  }
  EXPECT_EQ(calls.load(), 400);  // 200 submissions x 2 cores
}

TEST(CpuDevice, BoundQueuesStartOnACacheLineOfTheirOwn) {
  // Not beside their reference counts, which every submit changes on the submitting thread (hw_queue.cpp): eight
  // copies, since a count placed right before an object can still leave it aligned by chance.
  CpuDevice dev(CpuDeviceOptions{.workers = 1});
  std::atomic<int64_t> calls{0};
  HWQueue q;
  q.exec(count_call, {&calls});
  std::vector<std::shared_ptr<BoundQueue>> bound;
  for (int i = 0; i < 8; ++i) {
    bound.push_back(dev.bind(q));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(bound.back().get()) % 64, 0u) << "copy " << i;
  }
}

TEST(CpuDevice, BoundAndRecordedQueuesInTurnPastTheRingHintsWrapEachRunTheirOwnCommands) {
  // The dispatcher finds a submission's body through a hint that carries its number's low 16 bits (cpu_device.h):
  // 2^16 + 100 submissions without waiting (the ring fills and wraps) alternate a bound queue and a recorded one,
  // each counting into its own word.
  CpuDevice dev(CpuDeviceOptions{.workers = 1});
  std::atomic<int64_t> bound_calls{0}, recorded_calls{0};
  HWQueue bound, recorded;
  bound.exec(count_call, {&bound_calls}).bind(dev);
  recorded.exec(count_call, {&recorded_calls});
  constexpr int kEach = (65536 + 100) / 2;
  for (int i = 0; i < kEach; ++i) {
    bound.submit(dev);
    recorded.submit(dev);
  }
  HWQueue fence;
  fence.signal(dev.timeline_signal(), dev.next_timeline()).submit(dev);
  dev.synchronize(10'000ms);
  EXPECT_EQ(bound_calls.load(), kEach);
  EXPECT_EQ(recorded_calls.load(), kEach);
}

TEST(CpuDevice, FreeCpuIsOneNoThreadOfTheDeviceIsPinnedTo) {
  const std::vector<int> cpus = allowed_cpus();
  CpuDevice one(CpuDeviceOptions{.workers = 1});
  if (cpus.size() >= 2) {
    EXPECT_EQ(one.thread_cpu(0), cpus[0]);
    EXPECT_EQ(one.free_cpu(), cpus[1]);
  }
  EXPECT_EQ(one.thread_cpu(1), -1);  // no such thread
  CpuDevice all(CpuDeviceOptions{.workers = static_cast<uint32_t>(cpus.size())});
  EXPECT_EQ(all.free_cpu(), -1);
  CpuDevice unpinned(CpuDeviceOptions{.workers = 1, .pin_threads = false});
  EXPECT_EQ(unpinned.thread_cpu(0), -1);
  EXPECT_EQ(unpinned.free_cpu(), -1);
}

TEST(CpuDevice, ThreadPinKeepsTheThreadOnItsCpuAndGivesBackTheCpusItHad) {
  const std::vector<int> before = allowed_cpus();
  {
    const ThreadPin pin(before.back());
    EXPECT_EQ(allowed_cpus(), std::vector<int>{before.back()});
    EXPECT_EQ(sched_getcpu(), before.back());
    SpinEcho echo(before.front());  // a partner pinned elsewhere answers
    echo.round_trip(7);
  }
  EXPECT_EQ(allowed_cpus(), before);
  const ThreadPin none(-1);
  EXPECT_EQ(allowed_cpus(), before);
}

TEST(CpuDevice, RecordingAfterBindAndSubmittingElsewhereAreErrors) {
  CpuDevice dev(CpuDeviceOptions{.workers = 1});
  CpuDevice other(CpuDeviceOptions{.workers = 1});
  std::atomic<int64_t> calls{0};
  HWQueue q;
  q.exec(count_call, {&calls}).bind(dev);
  try {
    q.memory_barrier();
    FAIL() << "recording after bind did not throw";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("bound to CPU"), std::string::npos) << e.what();
  }
  EXPECT_THROW(q.bind(dev), std::logic_error);
  EXPECT_THROW(q.submit(other), std::invalid_argument);
}

TEST(CpuDevice, SubmissionsBeyondTheRingsCapacityFromSeveralThreadsAllRun) {
  // 4 threads x 300 submissions without waiting: the 64-slot ring fills, wraps, and producers wait for room.
  CpuDevice dev(CpuDeviceOptions{.workers = 2});
  std::atomic<int64_t> calls{0};
  std::vector<std::thread> producers;
  for (int t = 0; t < 4; ++t)
    producers.emplace_back([&] {
      HWQueue q;
      q.exec(count_call, {&calls}, 1);
      for (int i = 0; i < 300; ++i) q.submit(dev);
    });
  for (std::thread& p : producers) p.join();
  HWQueue fence;
  fence.signal(dev.timeline_signal(), dev.next_timeline()).submit(dev);
  dev.synchronize(10'000ms);
  EXPECT_EQ(calls.load(), 1200);
}

TEST(CpuDevice, ThousandKernelsInOneSubmission) {
  CpuDevice dev(CpuDeviceOptions{.workers = 2});
  std::atomic<int64_t> calls{0};
  HWQueue q;
  for (int i = 0; i < 1000; ++i) q.exec(count_call, {&calls});
  q.signal(dev.timeline_signal(), dev.next_timeline()).submit(dev);
  dev.synchronize(10'000ms);
  EXPECT_EQ(calls.load(), 2000);  // 1000 kernels x 2 cores
}

TEST(CpuDevice, SynchronizeWaitsForTheTimeline) {
  CpuDevice dev(CpuDeviceOptions{.workers = 2});
  EXPECT_EQ(dev.timeline_value(), 1u);
  EXPECT_NO_THROW(dev.synchronize(10ms));  // nothing submitted: timeline 0 >= 0
  std::atomic<int64_t> calls{0};
  Signal& tl = dev.timeline_signal();
  for (int i = 0; i < 50; ++i) {
    HWQueue q;
    q.wait(tl, dev.timeline_value() - 1).exec(count_call, {&calls}, 1).signal(tl, dev.next_timeline()).submit(dev);
  }
  dev.synchronize(10'000ms);
  EXPECT_EQ(calls.load(), 50);
  EXPECT_EQ(dev.timeline_value(), 51u);
  EXPECT_EQ(tl.value(), 50u);
}

TEST(CpuDevice, SynchronizeTimesOutNamingTheTimeline) {
  CpuDevice dev(CpuDeviceOptions{.workers = 1});
  Signal& gate = dev.new_signal("gate");
  HWQueue q;
  q.wait(gate, 1).signal(dev.timeline_signal(), dev.next_timeline()).submit(dev);
  try {
    dev.synchronize(30ms);
    FAIL() << "expected a timeout";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(),
                 "CPU: signal 'timeline' did not reach 1 within 30 ms; last value 0; its queue waits for signal 'gate' "
                 "(CPU) to reach 1 (value 0), command 0 of its oldest unfinished submission");
  }
  gate.set(1);
  EXPECT_NO_THROW(dev.synchronize(10'000ms));
}

TEST(CpuDevice, DestructionWhileIdle) {
  for (int i = 0; i < 5; ++i) {
    CpuDevice dev(CpuDeviceOptions{.workers = 3});
    EXPECT_EQ(dev.worker_count(), 3u);
  }
}

TEST(CpuDevice, DestructionRightAfterSubmitFinishesTheSubmittedWork) {
  Signal done("host", "done");
  std::atomic<int64_t> calls{0};
  {
    CpuDevice dev(CpuDeviceOptions{.workers = 2});
    HWQueue q;
    for (int i = 0; i < 20; ++i) q.exec(count_call, {&calls});
    q.signal(done, 1).submit(dev);
  }
  EXPECT_EQ(calls.load(), 40);
  EXPECT_EQ(done.value(), 1u);
}

TEST(CpuDevice, DestructionAbandonsAWaitThatNeverPasses) {
  Signal never("host", "never");
  Signal done("host", "done");
  std::atomic<int64_t> calls{0};
  {
    CpuDevice dev(CpuDeviceOptions{.workers = 2});
    HWQueue q;
    q.wait(never, 1).exec(count_call, {&calls}).signal(done, 1).submit(dev);
    HWQueue later;
    later.exec(count_call, {&calls}).submit(dev);
  }
  // Nothing after the blocked wait ran, in its submission or in later ones.
  EXPECT_EQ(calls.load(), 0);
  EXPECT_EQ(done.value(), 0u);
}

TEST(CpuDevice, KernelThatThrowsFailsItsSubmissionWithTheMessageAndTheDeviceStaysUsable) {
  for (int64_t throwing_core : {0, 2}) {  // on the dispatcher, on a worker
    CpuDevice dev(CpuDeviceOptions{.workers = 3});
    std::atomic<int64_t> calls{0};
    std::atomic<int64_t> after{0};
    Signal& done = dev.new_signal("done");
    std::array<void*, 1> bufs{&calls};
    std::array<int64_t, 1> which{throwing_core};
    HWQueue q;
    q.exec(throw_on_one_core, bufs, which).exec(count_call, {&after}).signal(done, 1);
    q.signal(dev.timeline_signal(), dev.next_timeline()).submit(dev);
    try {
      dev.synchronize(10'000ms);
      FAIL() << "expected the kernel's error";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()),
                "CPU: exec (command 0 of its submission) failed: the kernel threw: boom on core " +
                    std::to_string(throwing_core) +
                    "; the rest of the submission's exec, copy and timestamp commands were skipped");
    }
    EXPECT_EQ(calls.load(), 2);  // the other two cores ran
    EXPECT_EQ(after.load(), 0);  // the exec after the failed one was skipped...
    EXPECT_EQ(done.value(), 1u);  // ...but its signals were written, so nobody waits forever
    // Reported once, and the device runs what comes next.
    EXPECT_NO_THROW(dev.synchronize(10'000ms));
    HWQueue next;
    next.exec(count_call, {&after}).signal(dev.timeline_signal(), dev.next_timeline()).submit(dev);
    EXPECT_NO_THROW(dev.synchronize(10'000ms));
    EXPECT_EQ(after.load(), 3);
  }
}

TEST(CpuDevice, KernelThatThrowsANonStandardExceptionIsReportedToo) {
  CpuDevice dev(CpuDeviceOptions{.workers = 1});
  HWQueue q;
  q.exec(throw_an_int, {nullptr}).signal(dev.timeline_signal(), dev.next_timeline()).submit(dev);
  try {
    dev.synchronize(10'000ms);
    FAIL() << "expected the kernel's error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the kernel threw: an exception that is not a std::exception"),
              std::string::npos)
        << e.what();
  }
}

TEST(CpuDevice, SignalCommandBelowTheSignalsValueFailsItsSubmissionNamingBothValues) {
  CpuDevice dev(CpuDeviceOptions{.workers = 1});
  Signal& s = dev.new_signal("progress", 5);
  HWQueue q;
  q.signal(s, 3).signal(dev.timeline_signal(), dev.next_timeline()).submit(dev);
  try {
    dev.synchronize(10'000ms);
    FAIL() << "expected the signal's error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(),
                 "CPU: signal on signal 'progress' (command 0 of its submission) failed: CPU: signal 'progress' cannot "
                 "be set to 3: its value is 5 and values only grow; the rest of the submission's exec, copy and "
                 "timestamp commands were skipped");
  }
  EXPECT_EQ(s.value(), 5u);
  EXPECT_NO_THROW(dev.synchronize(10'000ms));
}

TEST(CpuDevice, TwoFailedSubmissionsAreReportedAsTheFirstAndACount) {
  CpuDevice dev(CpuDeviceOptions{.workers = 1});
  for (int i = 0; i < 2; ++i) {
    HWQueue q;
    q.exec(throw_an_int, {nullptr}).signal(dev.timeline_signal(), dev.next_timeline()).submit(dev);
  }
  try {
    dev.synchronize(10'000ms);
    FAIL() << "expected the kernels' error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("(and 1 more failed queue)"), std::string::npos) << e.what();
  }
}

TEST(CpuDevice, BoundQueueSubmittedAfterItsDeviceWasDestroyedIsAnErrorNamingIt) {
  std::atomic<int64_t> calls{0};
  HWQueue q;
  {
    CpuDevice gone(CpuDeviceOptions{.workers = 1}, "CPU:7");
    q.exec(count_call, {&calls}).bind(gone);
  }
  // Whether or not the new device reuses the old one's address, the queue knows its device is gone.
  CpuDevice dev(CpuDeviceOptions{.workers = 1});
  try {
    q.submit(dev);
    FAIL() << "expected an error";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(),
                 "HWQueue::submit: the queue was bound to CPU:7, which has been destroyed (and its bound copy with "
                 "it); expected a queue bound to a live device: record it again and bind it to CPU");
  }
  EXPECT_THROW(q.memory_barrier(), std::logic_error);  // names the dead device without touching it
  EXPECT_EQ(calls.load(), 0);
}

TEST(CpuDevice, SubmitIntoARingFullBehindAWaitOnlyTheSubmitterCanSatisfyTimesOutNamingTheWait) {
  // The first submission waits for `gate`, which this thread would set after its submits; the 65th submit finds
  // the 64 slots full. The submits run on a helper thread so that a regression (a submit that never returns) fails
  // the test, after the watchdog opens the gate, instead of hanging it.
  CpuDevice dev(CpuDeviceOptions{.workers = 1, .submit_timeout = 100ms});
  Signal& gate = dev.new_signal("gate");
  Signal& finished = dev.new_signal("finished");
  std::string error;
  int submitted = 0;
  std::thread submitter([&] {
    try {
      HWQueue().wait(gate, 1).submit(dev);
      for (submitted = 1; submitted < 200; ++submitted) HWQueue().memory_barrier().submit(dev);
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
    finished.set(1);
  });
  const bool returned = finished.wait_for(1, 60s);
  if (!returned) gate.set(1);
  submitter.join();
  ASSERT_TRUE(returned) << "a submit into the full ring never returned";
  EXPECT_EQ(submitted, 64);
  EXPECT_EQ(error,
            "CPU: submit: the ring's 64 slots stayed full for 100 ms; its queue waits for signal 'gate' (CPU) to "
            "reach 1 (value 0), command 0 of its oldest unfinished submission");
  gate.set(1);
  HWQueue().signal(dev.timeline_signal(), dev.next_timeline()).submit(dev);
  EXPECT_NO_THROW(dev.synchronize(10'000ms));
}

}  // namespace
}  // namespace doorbell
