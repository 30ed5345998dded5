// The mod without the game: the action queue, the published snapshot and the HTTP server.
// HTTP thread: Api validates and enqueues (answering "queued" at once) or reads the snapshot.
// Game thread: Tick() applies queued actions through IGameActions and captures a new snapshot.
using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Threading;

namespace OniAgentMod.Core
{
    public sealed class ModCore : IDisposable
    {
        public const int DefaultPort = 23876;
        public const int QueueMax = 256;
        public const int ActionsPerTick = 64;

        private readonly IGameState state;
        private readonly IGameActions actions;
        private readonly IModLog log;
        public const int OutcomesKept = 1024;

        private readonly ConcurrentQueue<KeyValuePair<long, Func<IGameActions, string>>> queue =
            new ConcurrentQueue<KeyValuePair<long, Func<IGameActions, string>>>();
        private int queued;
        // every action's outcome by id, the newest OutcomesKept (the HTTP threads read, Tick writes)
        private readonly object outcomesLock = new object();
        private readonly Dictionary<long, JsonObject> outcomes = new Dictionary<long, JsonObject>();
        private readonly Queue<long> outcomeOrder = new Queue<long>();
        private long lastId;
        private Snapshot snapshot;        // replaced whole; read with Volatile.Read
        private HttpServer server;
        private readonly object gate = new object();
        private readonly ManualResetEvent stopped = new ManualResetEvent(false);
        public readonly Api Api;

        public ModCore(IGameState state, IGameActions actions, IModLog log, string serviceName)
        {
            this.state = state;
            this.actions = actions;
            this.log = log;
            Api = new Api(this, serviceName);
        }

        public int Port { get { return server == null ? 0 : server.Port; } }

        public Snapshot Current { get { return Volatile.Read(ref snapshot); } }

        /// <summary>Queue an action for the game thread: its id, or 0 when the queue is full.
        /// Its outcome starts as "queued" (Outcomes).</summary>
        public long Enqueue(string action, JsonObject body, Func<IGameActions, string> act)
        {
            if (Interlocked.Increment(ref queued) > QueueMax)
            {
                Interlocked.Decrement(ref queued);
                return 0;
            }
            long id;
            lock (outcomesLock)
            {
                id = ++lastId;
                outcomes[id] = new JsonObject().Add("id", id).Add("action", action).Add("state", "queued").Add("body", body);
                outcomeOrder.Enqueue(id);
                while (outcomeOrder.Count > OutcomesKept) outcomes.Remove(outcomeOrder.Dequeue());
            }
            queue.Enqueue(new KeyValuePair<long, Func<IGameActions, string>>(id, act));
            return id;
        }

        /// <summary>The outcomes kept, oldest first (copies: the caller may page them).</summary>
        public List<JsonObject> Outcomes()
        {
            lock (outcomesLock)
            {
                var list = new List<JsonObject>(outcomeOrder.Count);
                foreach (var id in outcomeOrder)
                {
                    var copy = new JsonObject();
                    foreach (var kv in outcomes[id].Items) copy.Add(kv.Key, kv.Value);
                    list.Add(copy);
                }
                return list;
            }
        }

        private void Settle(long id, string state, string reason)
        {
            lock (outcomesLock)
            {
                JsonObject o;
                if (!outcomes.TryGetValue(id, out o)) return;
                var settled = new JsonObject();   // replaced whole: a reader's copy never sees half of it
                foreach (var kv in o.Items) settled.Add(kv.Key, kv.Value);
                settled.Add("state", state);
                if (reason != null) settled.Add("reason", reason);
                outcomes[id] = settled;
            }
        }

        /// <summary>Game thread, once per frame or sim tick: apply queued actions, publish a snapshot.</summary>
        public void Tick()
        {
            KeyValuePair<long, Func<IGameActions, string>> item;
            for (int i = 0; i < ActionsPerTick && queue.TryDequeue(out item); i++)
            {
                Interlocked.Decrement(ref queued);
                try
                {
                    string refused = item.Value(actions);
                    Settle(item.Key, refused == null ? "applied" : "refused", refused);
                }
                catch (Exception e)
                {
                    log.Error("action " + item.Key + " failed: " + e.Message);
                    Settle(item.Key, "failed", e.GetType().Name + ": " + e.Message);
                }
            }
            try { Volatile.Write(ref snapshot, state.Capture()); }
            catch (Exception e) { log.Error("state capture failed: " + e.Message); }
        }

        /// <summary>Game thread, when a save is left: state endpoints answer not_ready until the next Tick.</summary>
        public void Forget() { Volatile.Write(ref snapshot, null); }

        /// <summary>Binds now; throws when the port cannot be had (tests, tools). The game uses StartOrRetry.</summary>
        public void Start(int port)
        {
            lock (gate)
            {
                if (server != null) return;
                var s = new HttpServer(Api, log);
                s.Start(port);
                server = s;
            }
            log.Info("listening on http://127.0.0.1:" + server.Port);
        }

        /// <summary>How long StartOrRetry waits between tries of a busy port.</summary>
        public int RetryMs = 5000;

        /// <summary>Never throws (it runs inside the game's OnLoad): binds now if it can; else logs why
        /// and tries again every RetryMs on a background thread until it binds or Stop is called.</summary>
        public void StartOrRetry(int port)
        {
            string why = TryStart(port);
            if (why == null) return;
            log.Error("cannot listen on 127.0.0.1:" + port + " (" + why + "); trying again every " + RetryMs + " ms");
            var t = new Thread(() =>
            {
                while (!stopped.WaitOne(RetryMs))
                    if (TryStart(port) == null) return;
            }) { IsBackground = true, Name = "oni-agent-bind-retry" };
            t.Start();
        }

        private string TryStart(int port)
        {
            try { Start(port); return null; }
            catch (Exception e) { return e.GetType().Name + ": " + e.Message; }
        }

        public void Stop()
        {
            stopped.Set();
            lock (gate)
            {
                if (server == null) return;
                server.Stop();
                server = null;
            }
        }

        public void Dispose() { Stop(); }
    }
}
