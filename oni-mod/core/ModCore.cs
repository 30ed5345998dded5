// The mod without the game: the action queue, the published snapshot and the HTTP server.
// HTTP thread: Api validates and enqueues (answering "queued" at once) or reads the snapshot.
// Game thread: Tick() applies queued actions through IGameActions and captures a new snapshot.
using System;
using System.Collections.Concurrent;
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
        private readonly ConcurrentQueue<Action<IGameActions>> queue = new ConcurrentQueue<Action<IGameActions>>();
        private int queued;
        private Snapshot snapshot;        // replaced whole; read with Volatile.Read
        private HttpServer server;
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

        /// <summary>Queue an action for the game thread; false when the queue is full.</summary>
        public bool Enqueue(Action<IGameActions> action)
        {
            if (Interlocked.Increment(ref queued) > QueueMax)
            {
                Interlocked.Decrement(ref queued);
                return false;
            }
            queue.Enqueue(action);
            return true;
        }

        /// <summary>Game thread, once per frame or sim tick: apply queued actions, publish a snapshot.</summary>
        public void Tick()
        {
            Action<IGameActions> action;
            for (int i = 0; i < ActionsPerTick && queue.TryDequeue(out action); i++)
            {
                Interlocked.Decrement(ref queued);
                try { action(actions); }
                catch (Exception e) { log.Error("action failed: " + e.Message); }
            }
            try { Volatile.Write(ref snapshot, state.Capture()); }
            catch (Exception e) { log.Error("state capture failed: " + e.Message); }
        }

        /// <summary>Game thread, when a save is left: state endpoints answer not_ready until the next Tick.</summary>
        public void Forget() { Volatile.Write(ref snapshot, null); }

        public void Start(int port)
        {
            if (server != null) return;
            server = new HttpServer(Api, log);
            server.Start(port);
            log.Info("listening on http://127.0.0.1:" + server.Port);
        }

        public void Stop()
        {
            if (server == null) return;
            server.Stop();
            server = null;
        }

        public void Dispose() { Stop(); }
    }
}
