// The test host: the mod core over a FakeGame, with a "game thread" ticking every 10 ms.
// `mono OniAgentMod.TestHost.exe [--port N] [--tick-ms MS] [--no-game]` (port 0 = a free one);
// prints "listening on http://127.0.0.1:P".
// Ends when stdin closes (the test harness holds it open) or on SIGTERM.
using System;
using System.Threading;
using OniAgentMod.Core;

namespace OniAgentMod.Host
{
    public sealed class ConsoleLog : IModLog
    {
        public void Info(string message) { Console.Out.WriteLine("[oni-agent] " + message); Console.Out.Flush(); }
        public void Error(string message) { Console.Error.WriteLine("[oni-agent] error: " + message); }
    }

    public static class Program
    {
        public static int Main(string[] args)
        {
            int port = ModCore.DefaultPort, tickMs = 10, retryMs = 5000;
            bool noGame = Array.IndexOf(args, "--no-game") >= 0;   // never ticks: no snapshot (not_ready)
            for (int i = 0; i + 1 < args.Length; i++)
            {
                if (args[i] == "--port") port = int.Parse(args[i + 1]);
                if (args[i] == "--tick-ms") tickMs = int.Parse(args[i + 1]);   // a huge value: one tick, then a stalled game
                if (args[i] == "--retry-ms") retryMs = int.Parse(args[i + 1]);
            }
            var game = new FakeGame();
            var core = new ModCore(game, game, new ConsoleLog(), "oni-agent-mod (test host)");
            bool stop = false;
            var gameThread = new Thread(() =>
            {
                while (!Volatile.Read(ref stop)) { core.Tick(); Thread.Sleep(tickMs); }
            }) { IsBackground = true, Name = "game" };
            game.GameThread = gameThread;
            if (!noGame) gameThread.Start();
            core.RetryMs = retryMs;
            core.StartOrRetry(port);   // as the game does: a busy port is logged and retried
            try { while (Console.In.Read() >= 0) { } }
            catch (Exception) { }
            Volatile.Write(ref stop, true);
            core.Stop();
            return 0;
        }
    }
}
