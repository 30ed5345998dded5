// A small HTTP/1.1 server on 127.0.0.1 only (TcpListener; HttpListener needs URL ACLs on Windows
// and behaves differently across Mono versions). One accept thread, each connection on the thread
// pool, one request per connection (Connection: close), bodies up to Api.MaxBody, 5 s I/O timeouts.
using System;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;

namespace OniAgentMod.Core
{
    public sealed class HttpServer
    {
        private const int MaxHeaderBytes = 16 * 1024;
        private const int IoTimeoutMs = 5000;
        private readonly Api api;
        private readonly IModLog log;
        private TcpListener listener;
        private Thread thread;
        private volatile bool running;

        public HttpServer(Api api, IModLog log) { this.api = api; this.log = log; }

        public int Port { get; private set; }

        public void Start(int port)
        {
            listener = new TcpListener(IPAddress.Loopback, port);   // never 0.0.0.0
            listener.Start();
            Port = ((IPEndPoint)listener.LocalEndpoint).Port;
            running = true;
            thread = new Thread(AcceptLoop) { IsBackground = true, Name = "oni-agent-http" };
            thread.Start();
        }

        public void Stop()
        {
            running = false;
            try { listener.Stop(); } catch (SocketException) { }
            if (thread != null) thread.Join(2000);
        }

        private void AcceptLoop()
        {
            while (running)
            {
                TcpClient client;
                try { client = listener.AcceptTcpClient(); }
                catch (SocketException) { if (!running) return; continue; }
                catch (ObjectDisposedException) { return; }
                ThreadPool.QueueUserWorkItem(_ => Serve(client));
            }
        }

        private void Serve(TcpClient client)
        {
            using (client)
            {
                try
                {
                    client.ReceiveTimeout = IoTimeoutMs;
                    client.SendTimeout = IoTimeoutMs;
                    var stream = client.GetStream();
                    var response = ReadAndHandle(stream, client.Client);
                    Write(stream, response);
                }
                catch (IOException) { }
                catch (SocketException) { }
                catch (Exception e)
                {
                    log.Error("request failed: " + e.GetType().Name + ": " + e.Message);
                    try { Write(client.GetStream(), new ApiResponse(500, new JsonObject().Add("error", "internal_error").Add("details", "see the game log"))); }
                    catch (Exception) { }
                }
            }
        }

        // Mono does not apply ReceiveTimeout to NetworkStream reads (a client that announces a body
        // and sends none held a pool thread for good): every read first waits for data with Poll.
        private static void AwaitData(Socket socket)
        {
            if (socket.Available == 0 && !socket.Poll(IoTimeoutMs * 1000, SelectMode.SelectRead))
                throw new IOException("no data within " + IoTimeoutMs + " ms");
        }

        private ApiResponse ReadAndHandle(NetworkStream stream, Socket socket)
        {
            // headers: read byte by byte up to CRLFCRLF (small, bounded)
            var head = new MemoryStream();
            int matched = 0;
            while (matched < 4)
            {
                AwaitData(socket);
                int b = stream.ReadByte();
                if (b < 0) throw new IOException("connection closed");
                head.WriteByte((byte)b);
                matched = (b == (matched % 2 == 0 ? '\r' : '\n')) ? matched + 1 : (b == '\r' ? 1 : 0);
                if (head.Length > MaxHeaderBytes) return Error(431, "request headers too large");
            }
            string[] lines = Encoding.ASCII.GetString(head.ToArray()).Split(new[] { "\r\n" }, StringSplitOptions.None);
            string[] start = lines[0].Split(' ');
            if (start.Length != 3) return Error(400, "malformed request line");
            long length = 0;
            for (int i = 1; i < lines.Length; i++)
            {
                int colon = lines[i].IndexOf(':');
                if (colon <= 0) continue;
                string name = lines[i].Substring(0, colon).Trim();
                string value = lines[i].Substring(colon + 1).Trim();
                if (name.Equals("Content-Length", StringComparison.OrdinalIgnoreCase) && !long.TryParse(value, out length))
                    return Error(400, "bad Content-Length");
                if (name.Equals("Transfer-Encoding", StringComparison.OrdinalIgnoreCase))
                    return Error(400, "chunked bodies are not supported; send Content-Length");
            }
            if (length < 0) return Error(400, "bad Content-Length");
            if (length > Api.MaxBody) return Error(413, "request body over " + Api.MaxBody + " bytes");
            var body = new byte[length];
            int read = 0;
            while (read < length)
            {
                AwaitData(socket);
                int n = stream.Read(body, read, (int)length - read);
                if (n <= 0) throw new IOException("body cut short");
                read += n;
            }
            string target = start[1];
            int q = target.IndexOf('?');
            string path = q < 0 ? target : target.Substring(0, q);
            var query = ParseQuery(q < 0 ? "" : target.Substring(q + 1));
            string text;
            try { text = new UTF8Encoding(false, true).GetString(body); }
            catch (ArgumentException) { return Error(400, "request body is not UTF-8"); }
            return api.Handle(start[0], path, query, text);
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

        private static ApiResponse Error(int status, string details)
        {
            return new ApiResponse(status, new JsonObject().Add("error", "invalid_request").Add("details", details));
        }

        private static readonly Dictionary<int, string> Reasons = new Dictionary<int, string>
        {
            { 200, "OK" }, { 400, "Bad Request" }, { 404, "Not Found" }, { 405, "Method Not Allowed" },
            { 413, "Payload Too Large" }, { 431, "Request Header Fields Too Large" }, { 500, "Internal Server Error" },
            { 501, "Not Implemented" }, { 503, "Service Unavailable" },
        };

        private static void Write(Stream stream, ApiResponse r)
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
            stream.Write(headBytes, 0, headBytes.Length);
            stream.Write(body, 0, body.Length);
            stream.Flush();
        }
    }
}
