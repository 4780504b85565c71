// clang++'s workload for the corpus: enough templates (regex, map,
// iostream, algorithms over tuples) to keep the compiler busy for seconds,
// deep in its own recursion, where its stack outgrows an 8 KiB copy.
#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <variant>
#include <vector>

template <int N> struct Fib { static constexpr long value = Fib<N - 1>::value + Fib<N - 2>::value; };
template <> struct Fib<1> { static constexpr long value = 1; };
template <> struct Fib<0> { static constexpr long value = 0; };

using V = std::variant<int, double, std::string, std::vector<int>>;

template <typename... T> std::string join (const std::tuple<T...> &t)
{
  std::ostringstream o;
  std::apply ([&] (const auto &... x) { ((o << x << ','), ...); }, t);
  return o.str ();
}

int main (int argc, char **argv)
{
  std::map<std::string, std::vector<V>> m;
  std::unordered_map<int, std::set<std::string>> u;
  std::regex re ("([a-z]+)([0-9]*)");
  for (int i = 1; i < argc; i++)
    {
      std::smatch sm;
      std::string s (argv[i]);
      if (std::regex_match (s, sm, re))
        m[sm[1]].push_back (V (std::stoi (sm[2].str () + "0")));
      u[i].insert (join (std::make_tuple (i, 1.5, s, Fib<40>::value)));
    }
  std::vector<std::tuple<int, std::string, double>> v;
  for (auto &kv : m)
    for (auto &x : kv.second)
      std::visit ([&] (auto &&y) { v.emplace_back ((int) kv.second.size (), kv.first, sizeof y); },
                  x);
  std::sort (v.begin (), v.end ());
  std::function<long (long)> f = [&] (long n) { return n < 2 ? n : f (n - 1) + f (n - 2); };
  std::cout << v.size () << ' ' << u.size () << ' ' << f (20) << '\n';
  return 0;
}
