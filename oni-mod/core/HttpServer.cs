// A small HTTP/1.1 server on 127.0.0.1 only (a raw Socket; HttpListener needs URL ACLs on Windows
// and behaves differently across Mono versions). One request per connection (Connection: close).
//
// Threads, all of them this server's own and bounded (no thread pool, so nothing else in the game
// can starve it and it cannot starve the game):
// - one reader thread accepts connections and reads every open connection with Socket.Select, so a
//   client that trickles its request costs a buffer, not a thread. A request must arrive whole
//   (headers and body) within RequestDeadlineMs of its connection, else it is answered 408.
//   At most MaxConnections are read at once; one more is answered 503 and closed.
// - Workers threads answer complete requests (Api.Handle reads only the published snapshot) and
//   write the answer with a send timeout; at most QueueMax complete requests wait for them.
//
// Before the API sees a request it must be from this machine and not a web page: a request with an
// Origin header (browsers send it on cross-origin requests) or a Host other than a loopback name
// (DNS rebinding) is refused 403, and a POST whose Content-Type is not application/json (a
// "simple" cross-origin request a page can send without asking) is refused 415. Every refusal is a
// JSON error like the API's.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;

namespace OniAgentMod.Core
{
    public sealed class HttpServer
    {
        public const int MaxHeaderBytes = 16 * 1024;
        public const int MaxConnections = 256;
        public const int Workers = 4;
        public const int QueueMax = 64;
        public const int RequestDeadlineMs = 5000;
        private const int WriteTimeoutMs = 5000;

        private readonly Api api;
        private readonly IModLog log;
        private Socket listener;
        private Thread reader;
        private readonly List<Thread> workers = new List<Thread>();
        private readonly Queue<Job> ready = new Queue<Job>();
        private volatile bool running;

        public HttpServer(Api api, IModLog log) { this.api = api; this.log = log; }

        public int Port { get; private set; }

        /// <summary>Binds 127.0.0.1:port (0 = any free port); throws SocketException when it cannot.</summary>
        public void Start(int port)
        {
            var s = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            try
            {
                s.ExclusiveAddressUse = true;
                s.Bind(new IPEndPoint(IPAddress.Loopback, port));   // never 0.0.0.0
                s.Listen(128);
            }
            catch (Exception)
            {
                s.Close();
                throw;
            }
            listener = s;
            Port = ((IPEndPoint)s.LocalEndPoint).Port;
            running = true;
            reader = new Thread(ReadLoop) { IsBackground = true, Name = "oni-agent-http-reader" };
            reader.Start();
            for (int i = 0; i < Workers; i++)
            {
                var t = new Thread(WorkLoop) { IsBackground = true, Name = "oni-agent-http-" + i };
                workers.Add(t);
                t.Start();
            }
        }

        public void Stop()
        {
            running = false;
            lock (ready) Monitor.PulseAll(ready);
            try { listener.Close(); } catch (Exception) { }
            if (reader != null) reader.Join(2000);
            foreach (var t in workers) t.Join(2000);
        }

        private sealed class Conn
        {
            public Socket Socket;
            public long Started;
            public byte[] Buffer = new byte[4096];
            public int Length;
            public int HeadEnd = -1;      // index just past CRLFCRLF once seen
            public long BodyLength = -1;
            public string[] Start;        // the request line's method, target and version
        }

        private sealed class Job
        {
            public Socket Socket;
            public ApiResponse Preset;    // an answer decided while reading (errors), or null
            public string Method, Target, Body;
        }

        private void ReadLoop()
        {
            var conns = new Dictionary<Socket, Conn>();
            var clock = Stopwatch.StartNew();
            var chunk = new byte[8192];
            while (running)
            {
                var readable = new List<Socket>(conns.Count + 1) { listener };
                readable.AddRange(conns.Keys);
                try { Socket.Select(readable, null, null, 100 * 1000); }
                catch (ObjectDisposedException) { break; }
                catch (SocketException) { if (!running) break; continue; }
                long now = clock.ElapsedMilliseconds;
                foreach (var s in readable)
                {
                    if (s == listener) { Accept(conns, now); continue; }
                    Conn c;
                    if (!conns.TryGetValue(s, out c)) continue;
                    int n;
                    try { n = s.Receive(chunk, 0, chunk.Length, SocketFlags.None); }
                    catch (SocketException) { n = 0; }
                    catch (ObjectDisposedException) { n = 0; }
                    if (n <= 0) { conns.Remove(s); Close(s); continue; }
                    var job = Take(c, chunk, n);
                    if (job != null) { conns.Remove(s); Dispatch(job); }
                }
                var late = new List<Socket>();
                foreach (var kv in conns)
                    if (now - kv.Value.Started > RequestDeadlineMs) late.Add(kv.Key);
                foreach (var s in late)
                {
                    conns.Remove(s);
                    Dispatch(new Job { Socket = s, Preset = Error(408, "request_timeout",
                        "the whole request must arrive within " + RequestDeadlineMs + " ms") });
                }
            }
            foreach (var s in conns.Keys) Close(s);
        }

        private void Accept(Dictionary<Socket, Conn> conns, long now)
        {
            while (listener.Poll(0, SelectMode.SelectRead))
            {
                Socket s;
                try { s = listener.Accept(); }
                catch (SocketException) { return; }
                catch (ObjectDisposedException) { return; }
                if (conns.Count >= MaxConnections)
                {
                    Dispatch(new Job { Socket = s, Preset = Error(503, "busy", "too many open connections; retry") });
                    continue;
                }
                conns[s] = new Conn { Socket = s, Started = now };
            }
        }

        /// <summary>Adds bytes to a connection; a Job once the request is complete or refused, else null.</summary>
        private Job Take(Conn c, byte[] chunk, int n)
        {
            if (c.Length + n > c.Buffer.Length)
            {
                long cap = MaxHeaderBytes + Api.MaxBody;
                if (c.Length + n > cap)
                    return Refuse(c, c.HeadEnd < 0 ? 431 : 413, c.HeadEnd < 0 ? "request headers too large" : "request body over " + Api.MaxBody + " bytes");
                Array.Resize(ref c.Buffer, (int)Math.Min(cap, Math.Max(c.Buffer.Length * 2, c.Length + n)));
            }
            Buffer.BlockCopy(chunk, 0, c.Buffer, c.Length, n);
            c.Length += n;
            if (c.HeadEnd < 0)
            {
                int end = IndexOfHeadEnd(c.Buffer, c.Length);
                if (end < 0)
                    return c.Length > MaxHeaderBytes ? Refuse(c, 431, "request headers too large") : null;
                if (end > MaxHeaderBytes) return Refuse(c, 431, "request headers too large");
                c.HeadEnd = end;
                var refused = CheckHead(c);
                if (refused != null) return refused;
            }
            if (c.Length - c.HeadEnd < c.BodyLength) return null;
            return Complete(c);
        }

        private static int IndexOfHeadEnd(byte[] b, int length)
        {
            for (int i = 3; i < length; i++)
                if (b[i] == '\n' && b[i - 1] == '\r' && b[i - 2] == '\n' && b[i - 3] == '\r') return i + 1;
            return -1;
        }

        private static Job Refuse(Conn c, int status, string details)
        {
            return new Job { Socket = c.Socket, Preset = Error(status, "invalid_request", details) };
        }

        /// <summary>Parses and checks the head; the refusal, or null with c.BodyLength set.</summary>
        private Job CheckHead(Conn c)
        {
            string head = Encoding.ASCII.GetString(c.Buffer, 0, c.HeadEnd - 4);
            string[] headLines = head.Split(new[] { "\r\n" }, StringSplitOptions.None);
            string[] start = headLines[0].Split(' ');
            c.Start = start;
            if (start.Length != 3 || start[0].Length == 0 || !start[1].StartsWith("/", StringComparison.Ordinal)
                || !start[2].StartsWith("HTTP/1.", StringComparison.Ordinal))
                return Refuse(c, 400, "malformed request line");
            long length = 0;
            bool sawLength = false;
            string host = null, contentType = null;
            for (int i = 1; i < headLines.Length; i++)
            {
                int colon = headLines[i].IndexOf(':');
                if (colon <= 0) return Refuse(c, 400, "malformed header line");
                string name = headLines[i].Substring(0, colon).Trim();
                string value = headLines[i].Substring(colon + 1).Trim();
                if (name.Equals("Content-Length", StringComparison.OrdinalIgnoreCase))
                {
                    if (sawLength) return Refuse(c, 400, "duplicate Content-Length");
                    sawLength = true;
                    if (!Digits(value) || value.Length > 12 || !long.TryParse(value, out length))
                        return Refuse(c, 400, "bad Content-Length");
                }
                else if (name.Equals("Transfer-Encoding", StringComparison.OrdinalIgnoreCase))
                    return Refuse(c, 400, "chunked bodies are not supported; send Content-Length");
                else if (name.Equals("Origin", StringComparison.OrdinalIgnoreCase))
                    return new Job { Socket = c.Socket, Preset = Error(403, "forbidden", "requests from web pages (an Origin header) are refused") };
                else if (name.Equals("Host", StringComparison.OrdinalIgnoreCase))
                {
                    if (host != null) return Refuse(c, 400, "duplicate Host");
                    host = value;
                }
                else if (name.Equals("Content-Type", StringComparison.OrdinalIgnoreCase))
                    contentType = value;
            }
            if (host != null && !LoopbackHost(host))
                return new Job { Socket = c.Socket, Preset = Error(403, "forbidden", "Host must be 127.0.0.1, localhost or [::1]") };
            if (start[0] == "POST" && !IsJson(contentType))
                return new Job { Socket = c.Socket, Preset = Error(415, "invalid_request", "POST needs Content-Type: application/json") };
            if (length > Api.MaxBody) return Refuse(c, 413, "request body over " + Api.MaxBody + " bytes");
            c.BodyLength = length;
            return null;
        }

        private Job Complete(Conn c)
        {
            string[] start = c.Start;
            string body;
            try { body = new UTF8Encoding(false, true).GetString(c.Buffer, c.HeadEnd, (int)c.BodyLength); }
            catch (ArgumentException) { return Refuse(c, 400, "request body is not UTF-8"); }
            return new Job { Socket = c.Socket, Method = start[0], Target = start[1], Body = body };
        }

        private static bool Digits(string v)
        {
            if (v.Length == 0) return false;
            foreach (char ch in v) if (ch < '0' || ch > '9') return false;
            return true;
        }

        /// <summary>127.0.0.1, localhost or [::1], each with an optional :port.</summary>
        internal static bool LoopbackHost(string host)
        {
            string h = host.ToLowerInvariant();
            if (h.StartsWith("[::1]", StringComparison.Ordinal)) h = h.Substring(5);
            else
            {
                int colon = h.IndexOf(':');
                string name = colon < 0 ? h : h.Substring(0, colon);
                if (name != "127.0.0.1" && name != "localhost") return false;
                h = colon < 0 ? "" : h.Substring(colon);
            }
            return h.Length == 0 || (h[0] == ':' && Digits(h.Substring(1)) && h.Length <= 6);
        }

        internal static bool IsJson(string contentType)
        {
            if (contentType == null) return false;
            int semi = contentType.IndexOf(';');
            string media = (semi < 0 ? contentType : contentType.Substring(0, semi)).Trim();
            return media.Equals("application/json", StringComparison.OrdinalIgnoreCase);
        }

        private void Dispatch(Job job)
        {
            lock (ready)
            {
                if (ready.Count >= QueueMax)
                {
                    // every worker is busy and the queue is full: refuse without waiting for anyone
                    RefuseBusy(job.Socket);
                    return;
                }
                ready.Enqueue(job);
                Monitor.Pulse(ready);
            }
        }

        // the answer to a request that cannot be queued: a best-effort 503 that never blocks the reader
        private static void RefuseBusy(Socket s)
        {
            try
            {
                s.Blocking = false;
                byte[] bytes = Encode(Error(503, "busy", "the server is busy; retry"), false);
                s.Send(bytes, 0, bytes.Length, SocketFlags.None);
            }
            catch (Exception) { }
            Close(s);
        }

        private void WorkLoop()
        {
            while (true)
            {
                Job job;
                lock (ready)
                {
                    while (running && ready.Count == 0) Monitor.Wait(ready);
                    if (!running) return;
                    job = ready.Dequeue();
                }
                Answer(job);
            }
        }

        private void Answer(Job job)
        {
            bool head = job.Method == "HEAD";
            try
            {
                ApiResponse response = job.Preset;
                if (response == null)
                {
                    string target = job.Target;
                    int q = target.IndexOf('?');
                    string path = q < 0 ? target : target.Substring(0, q);
                    response = api.Handle(job.Method, path, ParseQuery(q < 0 ? "" : target.Substring(q + 1)), job.Body);
                }
                Write(job.Socket, response, head);
            }
            catch (Exception e)
            {
                if (!(e is SocketException) && !(e is ObjectDisposedException))
                {
                    log.Error("request failed: " + e.GetType().Name + ": " + e.Message);
                    try { Write(job.Socket, Error(500, "internal_error", "see the game log"), head); }
                    catch (Exception) { }
                }
            }
            finally { Close(job.Socket); }
        }

        private static Dictionary<string, string> ParseQuery(string q)
        {
            var d = new Dictionary<string, string>();
            foreach (var part in q.Split('&'))
            {
                if (part.Length == 0) continue;
                int eq = part.IndexOf('=');
                string k = Uri.UnescapeDataString((eq < 0 ? part : part.Substring(0, eq)).Replace('+', ' '));
                string v = eq < 0 ? "" : Uri.UnescapeDataString(part.Substring(eq + 1).Replace('+', ' '));
                d[k] = v;
            }
            return d;
        }

        private static ApiResponse Error(int status, string error, string details)
        {
            return new ApiResponse(status, new JsonObject().Add("error", error).Add("details", details));
        }

        private static readonly Dictionary<int, string> Reasons = new Dictionary<int, string>
        {
            { 200, "OK" }, { 400, "Bad Request" }, { 403, "Forbidden" }, { 404, "Not Found" },
            { 405, "Method Not Allowed" }, { 408, "Request Timeout" }, { 413, "Payload Too Large" },
            { 415, "Unsupported Media Type" }, { 431, "Request Header Fields Too Large" },
            { 500, "Internal Server Error" }, { 501, "Not Implemented" }, { 503, "Service Unavailable" },
        };

        private static byte[] Encode(ApiResponse r, bool head)
        {
            byte[] body = Encoding.UTF8.GetBytes(Json.Write(r.Body));
            string reason;
            if (!Reasons.TryGetValue(r.Status, out reason)) reason = "Status";
            var sb = new StringBuilder();
            sb.Append("HTTP/1.1 ").Append(r.Status).Append(' ').Append(reason).Append("\r\n");
            sb.Append("Content-Type: application/json; charset=utf-8\r\n");
            sb.Append("Content-Length: ").Append(body.Length).Append("\r\n");
            sb.Append("Connection: close\r\n");
            foreach (var h in r.Headers) sb.Append(h.Key).Append(": ").Append(h.Value).Append("\r\n");
            sb.Append("\r\n");
            byte[] headBytes = Encoding.ASCII.GetBytes(sb.ToString());
            if (head) return headBytes;   // a HEAD answer has the headers of the JSON error, no body
            var all = new byte[headBytes.Length + body.Length];
            Buffer.BlockCopy(headBytes, 0, all, 0, headBytes.Length);
            Buffer.BlockCopy(body, 0, all, headBytes.Length, body.Length);
            return all;
        }

        private static void Write(Socket s, ApiResponse r, bool head)
        {
            byte[] bytes = Encode(r, head);
            s.Blocking = true;
            s.SendTimeout = WriteTimeoutMs;
            int sent = 0;
            while (sent < bytes.Length)
            {
                int n = s.Send(bytes, sent, bytes.Length - sent, SocketFlags.None);
                if (n <= 0) break;
                sent += n;
            }
        }

        private static void Close(Socket s)
        {
            try { s.Shutdown(SocketShutdown.Both); } catch (Exception) { }
            try { s.Close(); } catch (Exception) { }
        }
    }
}
