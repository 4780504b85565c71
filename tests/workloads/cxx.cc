// Workload for tests/e2e/demangle.sh: an -O2 C++ program whose frames have
// the names C++ makes: namespaces, class and function templates, lambdas,
// operators, constructors, virtual functions, std:: containers and
// algorithms, and exceptions thrown through several frames.
//
// Every sample should unwind through a chain of distinct mangled functions
// and a recursion of 10 to 25 frames of one template instance.  Functions
// are noinline and noclone, and each call's result is used after it, so no
// call becomes a tail call or a loop.
//
// Usage: cxx [MILLISECONDS]   (CPU time to burn; default 1500)

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#define NOINLINE __attribute__ ((noinline, noclone))

// Keeps the compiler from merging or removing work it can see through.
#define BARRIER(x) __asm__ volatile ("" : "+r" (x) : : "memory")

static volatile std::uint64_t sink;

namespace work {

struct too_odd : std::runtime_error
{
  explicit too_odd (std::uint64_t v) : std::runtime_error ("odd"), value (v) {}
  std::uint64_t value;
};

template <typename T>
NOINLINE std::uint64_t
sort_them (std::vector<T> &v, std::uint64_t seed)
{
  for (std::size_t i = 0; i < v.size (); i++)
    v[i] = static_cast<T> ((seed + i * 2654435761u) % 100003);
  std::sort (v.begin (), v.end ());
  std::uint64_t r = static_cast<std::uint64_t> (v[v.size () / 2]);
  BARRIER (r);
  return r;
}

class shape
{
public:
  virtual ~shape () = default;
  virtual std::uint64_t area (std::uint64_t seed) const = 0;
};

class square : public shape
{
public:
  NOINLINE explicit square (std::uint64_t side) : side_ (side) { BARRIER (side_); }
  NOINLINE std::uint64_t area (std::uint64_t seed) const override
  {
    std::uint64_t a = side_ | 1;
    for (int i = 0; i < 2000; i++)
      {
        a = a * 6364136223846793005ULL + seed;
        BARRIER (a);
      }
    return a;
  }

private:
  std::uint64_t side_;
};

template <typename Key>
class counter
{
public:
  NOINLINE std::uint64_t operator() (const Key &k, std::uint64_t n)
  {
    std::uint64_t total = 0;
    for (std::uint64_t i = 0; i < n; i++)
      total += ++counts_[k + static_cast<char> ('a' + i % 26)];
    BARRIER (total);
    return total;
  }

private:
  std::map<Key, std::uint64_t> counts_;
};

NOINLINE std::uint64_t
throw_if_odd (std::uint64_t v)
{
  if (v & 1)
    throw too_odd (v);
  BARRIER (v);
  return v;
}

NOINLINE std::uint64_t
catch_it (std::uint64_t v)
{
  std::uint64_t r;
  try
    {
      r = throw_if_odd (v);
    }
  catch (const too_odd &e)
    {
      r = e.value * 3;
    }
  BARRIER (r);
  return r;
}

template <typename F>
NOINLINE std::uint64_t
apply_n (F f, int n, std::uint64_t seed)
{
  std::uint64_t r = 0;
  for (int i = 0; i < n; i++)
    r += f (seed + i);
  BARRIER (r);
  return r;
}

// One of the leaves, by seed: each is a different kind of name.
NOINLINE std::uint64_t
leaf (std::uint64_t seed)
{
  std::uint64_t r;
  switch (seed % 5)
    {
    case 0:
      {
        std::vector<long> v (3000);
        r = sort_them (v, seed);
        break;
      }
    case 1:
      {
        std::vector<double> v (2000);
        r = sort_them (v, seed);
        break;
      }
    case 2:
      {
        square s (seed);
        const shape &sh = s;
        r = sh.area (seed);
        break;
      }
    case 3:
      {
        counter<std::string> c;
        r = c (std::string ("key-") + std::to_string (seed % 7), 400);
        break;
      }
    default:
      r = apply_n ([] (std::uint64_t x) NOINLINE { return catch_it (x); }, 8, seed);
      break;
    }
  BARRIER (r);
  return r + 1;
}

// The recursion: DEPTH frames of one template instance above leaf ().
template <int Tag>
struct recursion
{
  static NOINLINE std::uint64_t run (unsigned depth, std::uint64_t seed)
  {
    std::uint64_t r;
    if (depth == 0)
      r = leaf (seed);
    else
      r = run (depth - 1, seed * 31 + depth);
    BARRIER (r);
    return r ^ depth;
  }
};

namespace {

// A chain of distinct functions above the recursion, reached through a
// std::function and a lambda that captures.
NOINLINE std::uint64_t
inner_chain (unsigned depth, std::uint64_t seed)
{
  std::uint64_t r = recursion<7>::run (depth, seed + 3);
  BARRIER (r);
  return r + 3;
}

} // namespace

NOINLINE std::uint64_t
through_function (const std::function<std::uint64_t (unsigned, std::uint64_t)> &f,
                  unsigned depth, std::uint64_t seed)
{
  std::uint64_t r = f (depth, seed + 2);
  BARRIER (r);
  return r + 2;
}

NOINLINE std::uint64_t
outer_chain (unsigned depth, std::uint64_t seed)
{
  std::uint64_t bias = seed & 0xff;
  auto with_bias = [bias] (unsigned d, std::uint64_t s) NOINLINE {
    std::uint64_t r = inner_chain (d, s + bias);
    BARRIER (r);
    return r - bias;
  };
  std::uint64_t r = through_function (with_bias, depth, seed + 1);
  BARRIER (r);
  return r + 1;
}

} // namespace work

static double
cpu_ms ()
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int
main (int argc, char **argv)
{
  double budget = argc > 1 ? std::atof (argv[1]) : 1500.0;
  double start = cpu_ms ();
  std::uint64_t seed = 1, acc = 0;
  unsigned iter = 0;

  while (cpu_ms () - start < budget)
    for (int k = 0; k < 16; k++, iter++)
      {
        // Depth 10..25, changing every call.
        unsigned depth = 10 + (iter * 7) % 16;
        acc += work::outer_chain (depth, seed++);
      }
  sink = acc;
  std::printf ("cxx: %u iterations\n", iter);
  return 0;
}
