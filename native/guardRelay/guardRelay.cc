// The guard's native relay (see README.md beside this file): while a client session is quiet, a thread of its own
// reads the client's and the upstream's sockets and forwards ONLY simple Queries whose whole message bytes the
// guard's verdict cache passed as reads (exact bytes, hashed then compared in full), and the upstream's answers
// to them. Anything else hands the session back to JavaScript, with every byte it had not forwarded, in order.
#include <node_api.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

// A client message longer than this is never the native path's (it goes back to JavaScript whole).
constexpr size_t MAX_CLIENT_MESSAGE = 64 * 1024;
// Unsent bytes one way above this: the other side is not read until they drain (backpressure).
constexpr size_t HIGH_WATER = 256 * 1024;
// An upstream message longer than this goes back to JavaScript (it is relayed there in pieces).
constexpr size_t MAX_UPSTREAM_MESSAGE = 1024 * 1024;
constexpr size_t MAX_ALLOWED = 2000;
constexpr size_t READ_CHUNK = 64 * 1024;

int64_t nowNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}

uint32_t be32(const uint8_t* p) { return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3]; }

// ---- The verdict cache's key (src/guard/judge/verdictCache.ts statementKey), byte for byte ----
// A text of plain characters only has each plain number replaced by NUL and its class (I int4, L int8, N numeric);
// any other text is its own key ('=' and the text). Its parity with the JavaScript function is tested
// (test/unit/guard/guardRelayKey.test.ts) on generated texts.
constexpr size_t MAX_KEY_LENGTH = 4000;

bool isDigit(int c) { return c >= '0' && c <= '9'; }
bool isWordStart(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isWord(int c) { return isWordStart(c) || isDigit(c); }
bool isPlain(int c) {
  if (isWord(c)) return true;
  switch (c) {
    case ' ': case '\t': case '\n': case '\r': case '(': case ')': case ',': case '.': case ';': case '=':
    case '<': case '>': case '*': case '+': case '-': case ':': case '[': case ']':
      return true;
    default:
      return false;
  }
}

bool fitsUnder(const std::string& value, const char* max) {
  size_t n = strlen(max);
  return value.size() < n || (value.size() == n && value.compare(max) <= 0);
}

// 'I', 'L', or 0 (left as it is).
char integerClass(const std::string& digits) {
  std::string value = digits;
  if (!value.empty() && value[0] == '0') {
    size_t zeros = 0;
    while (zeros + 1 < value.size() && value[zeros] == '0') zeros++;
    value.erase(0, zeros);
  }
  if (fitsUnder(value, "2147483647")) return 'I';
  if (value == "2147483648") return 0;
  if (fitsUnder(value, "9223372036854775807")) return 'L';
  return 0;
}

// False when the text has no key (too long): it is never passed here.
bool statementKey(const char* sql, size_t n, std::string& key) {
  if (n > MAX_KEY_LENGTH) return false;
  bool plain = true;
  for (size_t i = 0; i < n && plain; i++) plain = isPlain((unsigned char)sql[i]) && !(sql[i] == '-' && i + 1 < n && sql[i + 1] == '-');
  auto own = [&]() {
    key.assign("=");
    key.append(sql, n);
    return true;
  };
  if (!plain) return own();
  auto at = [&](size_t i) -> int { return i < n ? (unsigned char)sql[i] : -1; };
  key.assign("#");
  size_t copied = 0, i = 0;
  while (i < n) {
    int c = at(i);
    if (isWordStart(c)) {
      while (i < n && isWord(at(i))) i++;
    } else if (isDigit(c)) {
      size_t start = i;
      while (i < n && isDigit(at(i))) i++;
      bool numeric = false;
      if (at(i) == '.') {
        numeric = true;
        i++;
        while (i < n && isDigit(at(i))) i++;
      }
      int e = at(i), sign = at(i + 1);
      if ((e == 'e' || e == 'E') && (isDigit(sign) || ((sign == '+' || sign == '-') && isDigit(at(i + 2))))) {
        numeric = true;
        i += 2;
        while (i < n && isDigit(at(i))) i++;
      }
      if (i < n && (isWord(at(i)) || at(i) == '.')) return own();
      char kind = numeric ? 'N' : integerClass(std::string(sql + start, i - start));
      if (kind != 0) {
        key.append(sql + copied, start - copied);
        key.push_back('\0');
        key.push_back(kind);
        copied = i;
      }
    } else if (c == '.' && isDigit(at(i + 1))) {
      return own();
    } else {
      i++;
    }
  }
  key.append(sql + copied, n - copied);
  return true;
}

// The passed texts: keys the verdict cache holds as 'pass' (registered one by one from its hits), each with an id.
std::mutex allowedMutex;
std::unordered_map<std::string, uint32_t> allowed;
std::atomic<int64_t> validUntilNs{0};

// The id of a key the verdict cache registered as passed, while the code version is fresh.
bool passedKey(const std::string& key, uint32_t* id) {
  if (nowNs() >= validUntilNs.load()) return false;
  std::lock_guard<std::mutex> lock(allowedMutex);
  auto found = allowed.find(key);
  if (found == allowed.end()) return false;
  *id = found->second;
  return true;
}

// A whole 'Q' message the JavaScript fast path would pass from the verdict cache: ASCII text, one NUL at its end,
// not a guard command (no "pg_agent" in it), its key registered while the code version is fresh.
bool passedQuery(const uint8_t* message, size_t length, uint32_t* id) {
  if (length < 6 || message[length - 1] != 0) return false;
  const char* sql = reinterpret_cast<const char*>(message + 5);
  size_t n = length - 6;
  static const char guardWord[] = "pg_agent";
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)sql[i];
    if (c == 0 || c >= 0x80) return false;
    if (i + 8 <= n) {
      size_t k = 0;
      while (k < 8 && (sql[i + k] | 0x20) == (guardWord[k] | 0x20)) k++;
      if (k == 8) return false;
    }
  }
  std::string key;
  return statementKey(sql, n, key) && passedKey(key, id);
}

struct Session {
  std::mutex m;
  uint32_t id = 0;
  int clientFd = -1;
  int upstreamFd = -1;
  bool owned = true;
  bool back = false;
  std::string reason;
  std::string fromClient, fromUpstream, toClient, toUpstream;
  // What the upstream still owes, one letter per forwarded message (q: a Query's ReadyForQuery).
  std::string awaited;
  char status = 'I';
  // The unnamed statement, as the thread last parsed it (the id of its registered Parse, or -1: not the thread's),
  // and whether the thread bound the unnamed portal from it.
  int64_t statement = -1;
  bool portal = false;
  uint32_t clientEvents = 0, upstreamEvents = 0;
  std::map<uint32_t, uint64_t> counts;
};

std::mutex sessionsMutex;
std::unordered_map<uint32_t, std::shared_ptr<Session>> sessions;
uint32_t nextId = 1;
int epollFd = -1;
std::thread worker;
napi_threadsafe_function backFn = nullptr;
std::atomic<int> owned{0};

void stopLocked(Session& s, const char* reason) {
  if (s.back) return;
  s.back = true;
  s.reason = reason;
  epoll_ctl(epollFd, EPOLL_CTL_DEL, s.clientFd, nullptr);
  epoll_ctl(epollFd, EPOLL_CTL_DEL, s.upstreamFd, nullptr);
  s.clientEvents = s.upstreamEvents = 0;
  napi_call_threadsafe_function(backFn, reinterpret_cast<void*>(uintptr_t(s.id)), napi_tsfn_nonblocking);
}

// Writes what it can; false on an error other than a full socket.
bool flushTo(int fd, std::string& out) {
  while (!out.empty()) {
    ssize_t n = send(fd, out.data(), out.size(), MSG_NOSIGNAL);
    if (n > 0) {
      out.erase(0, size_t(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;
  }
  return true;
}

// Reads what is there (up to a bound); false at end of stream or on an error (JavaScript meets it itself after).
bool readFrom(int fd, std::string& in) {
  char buffer[READ_CHUNK];
  for (int i = 0; i < 4; i++) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n > 0) {
      in.append(buffer, size_t(n));
      if (size_t(n) < sizeof buffer) return true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;
  }
  return true;
}

// Count kinds (what JavaScript replays: clientSession.ts nativeBack).
constexpr uint32_t COUNT_QUERY = 0, COUNT_PARSE = 1, COUNT_BIND = 2;

// The message at `p` (5 bytes there at least): its type and its span (its length word + the type byte); false when
// the length word is below 4 or the message would exceed `max`.
bool header(const uint8_t* p, size_t max, uint8_t* type, size_t* span) {
  uint32_t length = be32(p + 1);
  *type = p[0];
  *span = size_t(length) + 1;
  return length >= 4 && *span <= max;
}

int16_t be16(const uint8_t* p) { return int16_t((uint16_t(p[0]) << 8) | p[1]); }

// A Bind of the unnamed portal from the unnamed statement whose fields are exactly its bytes (as
// wire/frontendMessages.ts reads them: no byte more or less).
bool wholeUnnamedBind(const uint8_t* body, size_t n) {
  size_t at = 0;
  if (n < 2 || body[0] != 0 || body[1] != 0) return false;
  at = 2;
  auto count = [&](int16_t* out) {
    if (at + 2 > n) return false;
    *out = be16(body + at);
    at += 2;
    return *out >= 0;
  };
  int16_t formats, params, results;
  if (!count(&formats) || at + size_t(formats) * 2 > n) return false;
  at += size_t(formats) * 2;
  if (!count(&params)) return false;
  for (int i = 0; i < params; i++) {
    if (at + 4 > n) return false;
    int32_t length = int32_t(be32(body + at));
    at += 4;
    if (length < -1 || (length > 0 && at + size_t(length) > n)) return false;
    if (length > 0) at += size_t(length);
  }
  if (!count(&results) || at + size_t(results) * 2 > n) return false;
  at += size_t(results) * 2;
  return at == n;
}

bool passedParse(const uint8_t* body, size_t n, uint32_t* id) {
  if (n < 1 || body[0] != 0) return false;  // the unnamed statement only
  std::string key("P");
  key.append(reinterpret_cast<const char*>(body), n);
  return passedKey(key, id);
}

// Whole units from the start of what came: a passed Query, or an extended batch up to its Sync whose every message
// the JavaScript fast path forwards as it is. The first unit that is not (or a batch that cannot be whole) stops here.
void takeClient(Session& s) {
  size_t at = 0;
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(s.fromClient.data());
  size_t size = s.fromClient.size();
  while (!s.back && size - at >= 5) {
    uint8_t type;
    size_t span;
    if (!header(bytes + at, MAX_CLIENT_MESSAGE, &type, &span)) {
      stopLocked(s, "client message length");
      break;
    }
    if (type == 'Q') {
      if (size - at < span) break;  // not whole yet
      uint32_t id;
      if (!passedQuery(bytes + at, span, &id)) {
        stopLocked(s, nowNs() >= validUntilNs.load() ? "code version not checked recently" : "query not passed before");
        break;
      }
      s.toUpstream.append(reinterpret_cast<const char*>(bytes + at), span);
      s.awaited.push_back('q');
      s.counts[(id << 2) | COUNT_QUERY]++;
      at += span;
      continue;
    }
    // An extended batch: read on a copy of the state, taken only when it reaches its Sync.
    int64_t statement = s.statement;
    bool portal = s.portal;
    std::string awaited;
    std::vector<uint32_t> counted;
    size_t end = at;
    bool whole = false, refused = false;
    while (end < size) {
      if (size - end < 5) break;
      uint8_t t;
      size_t w;
      if (!header(bytes + end, MAX_CLIENT_MESSAGE, &t, &w)) {
        refused = true;
        break;
      }
      // A type the batch never takes refuses it at once, whole or not.
      if (t != 'P' && t != 'B' && t != 'D' && t != 'E' && t != 'S') {
        refused = true;
        break;
      }
      if (size - end < w) break;
      const uint8_t* body = bytes + end + 5;
      size_t n = w - 5;
      uint32_t id;
      if (t == 'P') {
        if (!passedParse(body, n, &id)) {
          refused = true;
          break;
        }
        statement = id;
        awaited.push_back('p');
        counted.push_back((id << 2) | COUNT_PARSE);
      } else if (t == 'B') {
        if (statement < 0 || !wholeUnnamedBind(body, n)) {
          refused = true;
          break;
        }
        portal = true;
        awaited.push_back('b');
        counted.push_back((uint32_t(statement) << 2) | COUNT_BIND);
      } else if (t == 'D') {
        bool ok = n == 2 && body[1] == 0 && ((body[0] == 'P' && portal) || (body[0] == 'S' && statement >= 0));
        if (!ok) {
          refused = true;
          break;
        }
        awaited.push_back(body[0] == 'P' ? 'P' : 'S');
      } else if (t == 'E') {
        if (n != 5 || body[0] != 0 || !portal) {
          refused = true;
          break;
        }
        awaited.push_back('e');
      } else {  // Sync
        if (n != 0) {
          refused = true;
          break;
        }
        awaited.push_back('s');
        end += w;
        whole = true;
        break;
      }
      end += w;
    }
    if (refused) {
      stopLocked(s, "client message not passed here");
      break;
    }
    if (!whole) {
      // Waiting for the rest of the batch, up to a bound.
      if (size - at >= MAX_CLIENT_MESSAGE) stopLocked(s, "extended batch too long");
      break;
    }
    s.toUpstream.append(reinterpret_cast<const char*>(bytes + at), end - at);
    s.awaited += awaited;
    s.statement = statement;
    s.portal = portal;
    for (uint32_t c : counted) s.counts[c]++;
    at = end;
  }
  s.fromClient.erase(0, at);
}

// Does this upstream message end the answer awaited first (as wire/pendingResponses.ts reads it)?
bool ends(char awaited, uint8_t type) {
  switch (awaited) {
    case 'q':
    case 's':
      return type == 'Z';
    case 'p':
      return type == '1';
    case 'b':
      return type == '2';
    case 'P':
    case 'S':
      return type == 'T' || type == 'n';
    case 'e':
      return type == 'C' || type == 'I' || type == 's';
    default:
      return false;
  }
}

// Upstream messages: a read's answer (row description, rows, tags, ReadyForQuery) goes to the client; anything else stops.
void takeUpstream(Session& s) {
  size_t at = 0;
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(s.fromUpstream.data());
  size_t size = s.fromUpstream.size();
  while (!s.back && size - at >= 5) {
    uint8_t type;
    size_t span;
    if (!header(bytes + at, MAX_UPSTREAM_MESSAGE, &type, &span)) {
      stopLocked(s, "upstream message length");
      break;
    }
    if (s.awaited.empty()) {
      stopLocked(s, "upstream message not awaited");
      break;
    }
    bool light = type == 'T' || type == 'D' || type == 'C' || type == 'I' || type == 'Z' || type == '1' || type == '2' ||
                 type == 'n' || type == 't' || type == 's';
    if (!light) {
      stopLocked(s, "upstream message");
      break;
    }
    if (size - at < span) break;
    if (type == 'Z') {
      if (span != 6 || !ends(s.awaited[0], type)) {
        stopLocked(s, "ready for query");
        break;
      }
      s.status = char(bytes[at + 5]);
      s.awaited.erase(0, 1);
    } else if (ends(s.awaited[0], type)) {
      s.awaited.erase(0, 1);
    }
    s.toClient.append(reinterpret_cast<const char*>(bytes + at), span);
    at += span;
    if (type == 'Z' && s.status != 'I') stopLocked(s, "transaction");
  }
  s.fromUpstream.erase(0, at);
}

void watch(Session& s) {
  if (s.back) return;
  uint32_t client = 0, upstream = 0;
  if (s.toUpstream.size() < HIGH_WATER && s.fromClient.size() < MAX_CLIENT_MESSAGE) client |= EPOLLIN;
  if (!s.toClient.empty()) client |= EPOLLOUT;
  if (s.toClient.size() < HIGH_WATER && s.fromUpstream.size() < MAX_UPSTREAM_MESSAGE + 5) upstream |= EPOLLIN;
  if (!s.toUpstream.empty()) upstream |= EPOLLOUT;
  epoll_event e{};
  if (client != s.clientEvents) {
    e.events = client;
    e.data.u64 = (uint64_t(s.id) << 1) | 0;
    epoll_ctl(epollFd, EPOLL_CTL_MOD, s.clientFd, &e);
    s.clientEvents = client;
  }
  if (upstream != s.upstreamEvents) {
    e.events = upstream;
    e.data.u64 = (uint64_t(s.id) << 1) | 1;
    epoll_ctl(epollFd, EPOLL_CTL_MOD, s.upstreamFd, &e);
    s.upstreamEvents = upstream;
  }
}

void step(Session& s, bool upstreamSide, uint32_t events) {
  if (s.back) return;
  bool ok = true;
  if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
    if (upstreamSide)
      ok = readFrom(s.upstreamFd, s.fromUpstream);
    else
      ok = readFrom(s.clientFd, s.fromClient);
  }
  takeUpstream(s);
  if (!s.back) takeClient(s);
  if (!flushTo(s.upstreamFd, s.toUpstream) || !flushTo(s.clientFd, s.toClient)) ok = false;
  if (!ok) stopLocked(s, "socket closed");
  watch(s);
}

void run() {
  pthread_setname_np(pthread_self(), "guardRelay");
  epoll_event events[64];
  for (;;) {
    int n = epoll_wait(epollFd, events, 64, -1);
    for (int i = 0; i < n; i++) {
      uint32_t id = uint32_t(events[i].data.u64 >> 1);
      bool upstreamSide = events[i].data.u64 & 1;
      std::shared_ptr<Session> s;
      {
        std::lock_guard<std::mutex> lock(sessionsMutex);
        auto found = sessions.find(id);
        if (found == sessions.end()) continue;
        s = found->second;
      }
      std::lock_guard<std::mutex> lock(s->m);
      step(*s, upstreamSide, events[i].events);
    }
  }
}

// ---- JavaScript side ----

void callBack(napi_env env, napi_value js, void*, void* data) {
  if (env == nullptr) return;
  napi_value id, global;
  napi_create_uint32(env, uint32_t(uintptr_t(data)), &id);
  napi_get_global(env, &global);
  napi_call_function(env, global, js, 1, &id, nullptr);
}

napi_value Start(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  if (backFn != nullptr) return nullptr;
  napi_value name;
  napi_create_string_utf8(env, "guardRelayBack", NAPI_AUTO_LENGTH, &name);
  napi_create_threadsafe_function(env, argv[0], nullptr, name, 0, 1, nullptr, nullptr, nullptr, callBack, &backFn);
  napi_unref_threadsafe_function(env, backFn);
  epollFd = epoll_create1(EPOLL_CLOEXEC);
  worker = std::thread(run);
  worker.detach();
  return nullptr;
}

int32_t intArg(napi_env env, napi_value v) {
  int32_t out = -1;
  napi_get_value_int32(env, v, &out);
  return out;
}

// adopt(clientFd, upstreamFd): the session's id; both sockets are the thread's until release(id).
napi_value Adopt(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  auto s = std::make_shared<Session>();
  // Descriptors of the thread's own: Node closing its socket meanwhile never lets the thread touch another one
  // that reuses the number; the connection lives until release() closes these.
  int clientFd = intArg(env, argv[0]), upstreamFd = intArg(env, argv[1]);
  s->clientFd = clientFd < 0 ? -1 : fcntl(clientFd, F_DUPFD_CLOEXEC, 0);
  s->upstreamFd = upstreamFd < 0 ? -1 : fcntl(upstreamFd, F_DUPFD_CLOEXEC, 0);
  napi_value result;
  if (epollFd < 0 || s->clientFd < 0 || s->upstreamFd < 0) {
    if (s->clientFd >= 0) close(s->clientFd);
    if (s->upstreamFd >= 0) close(s->upstreamFd);
    napi_get_undefined(env, &result);
    return result;
  }
  {
    std::lock_guard<std::mutex> lock(sessionsMutex);
    s->id = nextId++;
    if (nextId == 0) nextId = 1;
    sessions[s->id] = s;
  }
  std::lock_guard<std::mutex> lock(s->m);
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.u64 = (uint64_t(s->id) << 1) | 0;
  bool ok = epoll_ctl(epollFd, EPOLL_CTL_ADD, s->clientFd, &e) == 0;
  e.data.u64 = (uint64_t(s->id) << 1) | 1;
  ok = ok && epoll_ctl(epollFd, EPOLL_CTL_ADD, s->upstreamFd, &e) == 0;
  s->clientEvents = s->upstreamEvents = EPOLLIN;
  if (!ok) {
    epoll_ctl(epollFd, EPOLL_CTL_DEL, s->clientFd, nullptr);
    epoll_ctl(epollFd, EPOLL_CTL_DEL, s->upstreamFd, nullptr);
    close(s->clientFd);
    close(s->upstreamFd);
    std::lock_guard<std::mutex> l(sessionsMutex);
    sessions.erase(s->id);
    napi_get_undefined(env, &result);
    return result;
  }
  if (owned.fetch_add(1) == 0) napi_ref_threadsafe_function(env, backFn);
  napi_create_uint32(env, s->id, &result);
  return result;
}

napi_value bufferOf(napi_env env, const std::string& bytes) {
  napi_value out;
  void* data;
  napi_create_buffer_copy(env, bytes.size(), bytes.data(), &data, &out);
  return out;
}

void set(napi_env env, napi_value object, const char* key, napi_value value) {
  napi_set_named_property(env, object, key, value);
}

// release(id): the session is JavaScript's again, with everything the thread had not passed on.
napi_value Release(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  uint32_t id = 0;
  napi_get_value_uint32(env, argv[0], &id);
  std::shared_ptr<Session> s;
  {
    std::lock_guard<std::mutex> lock(sessionsMutex);
    auto found = sessions.find(id);
    if (found != sessions.end()) {
      s = found->second;
      sessions.erase(found);
    }
  }
  napi_value result;
  if (!s) {
    napi_get_undefined(env, &result);
    return result;
  }
  std::lock_guard<std::mutex> lock(s->m);
  if (!s->back) {
    s->back = true;
    s->reason = "released";
    epoll_ctl(epollFd, EPOLL_CTL_DEL, s->clientFd, nullptr);
    epoll_ctl(epollFd, EPOLL_CTL_DEL, s->upstreamFd, nullptr);
  }
  close(s->clientFd);
  close(s->upstreamFd);
  s->clientFd = s->upstreamFd = -1;
  if (owned.fetch_sub(1) == 1) napi_unref_threadsafe_function(env, backFn);
  napi_create_object(env, &result);
  set(env, result, "fromClient", bufferOf(env, s->fromClient));
  set(env, result, "fromUpstream", bufferOf(env, s->fromUpstream));
  set(env, result, "toClient", bufferOf(env, s->toClient));
  set(env, result, "toUpstream", bufferOf(env, s->toUpstream));
  napi_value text;
  napi_create_string_latin1(env, s->awaited.data(), s->awaited.size(), &text);
  set(env, result, "awaited", text);
  char status = s->status;
  napi_create_string_latin1(env, &status, 1, &text);
  set(env, result, "status", text);
  napi_create_string_utf8(env, s->reason.data(), s->reason.size(), &text);
  set(env, result, "reason", text);
  napi_value counts;
  napi_create_array(env, &counts);
  uint32_t i = 0;
  for (auto& [entry, n] : s->counts) {
    napi_value pair, a, b;
    napi_create_array_with_length(env, 2, &pair);
    napi_create_uint32(env, entry, &a);
    napi_create_double(env, double(n), &b);
    napi_set_element(env, pair, 0, a);
    napi_set_element(env, pair, 1, b);
    napi_set_element(env, counts, i++, pair);
  }
  set(env, result, "counts", counts);
  napi_value statement;
  napi_create_double(env, double(s->statement), &statement);
  set(env, result, "statement", statement);
  napi_value portal;
  napi_get_boolean(env, s->portal, &portal);
  set(env, result, "portal", portal);
  return result;
}

// allow(key, id): a key the verdict cache holds as 'pass' (statementKey's, as latin1 bytes).
napi_value Allow(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  void* data;
  size_t length;
  napi_value result;
  napi_get_boolean(env, false, &result);
  if (napi_get_buffer_info(env, argv[0], &data, &length) != napi_ok || length < 1 || length > MAX_KEY_LENGTH * 2 + 1)
    return result;
  uint32_t id = 0;
  napi_get_value_uint32(env, argv[1], &id);
  std::lock_guard<std::mutex> lock(allowedMutex);
  if (allowed.size() >= MAX_ALLOWED) allowed.clear();
  allowed[std::string(static_cast<const char*>(data), length)] = id;
  napi_get_boolean(env, true, &result);
  return result;
}

// keyOf(text): statementKey of a text (latin1 bytes), or undefined; for the parity test.
napi_value KeyOf(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  void* data;
  size_t length;
  napi_value result;
  napi_get_undefined(env, &result);
  if (napi_get_buffer_info(env, argv[0], &data, &length) != napi_ok) return result;
  std::string key;
  if (!statementKey(static_cast<const char*>(data), length, key)) return result;
  napi_create_string_latin1(env, key.data(), key.size(), &result);
  return result;
}

// passes(queryMessage): would the thread forward this whole message now (for the tests)?
napi_value Passes(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  void* data;
  size_t length;
  napi_value result;
  uint32_t id;
  bool ok = napi_get_buffer_info(env, argv[0], &data, &length) == napi_ok && length >= 5 &&
            static_cast<uint8_t*>(data)[0] == 'Q' && size_t(be32(static_cast<uint8_t*>(data) + 1)) + 1 == length &&
            passedQuery(static_cast<uint8_t*>(data), length, &id);
  napi_get_boolean(env, ok, &result);
  return result;
}

// forget(): no text is passed any more (a new code version, a schema change).
napi_value Forget(napi_env, napi_callback_info) {
  validUntilNs.store(0);
  std::lock_guard<std::mutex> lock(allowedMutex);
  allowed.clear();
  return nullptr;
}

// trust(ms): the passed texts hold for ms more (the code version's freshness as the verdict cache reads it).
napi_value Trust(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  double ms = 0;
  napi_get_value_double(env, argv[0], &ms);
  validUntilNs.store(ms > 0 ? nowNs() + int64_t(ms * 1e6) : 0);
  return nullptr;
}

napi_value Init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"start", nullptr, Start, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"adopt", nullptr, Adopt, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"release", nullptr, Release, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"allow", nullptr, Allow, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"forget", nullptr, Forget, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"trust", nullptr, Trust, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"keyOf", nullptr, KeyOf, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"passes", nullptr, Passes, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
