// Compile-only reference stubs (see README.md): no body here runs the game.
namespace OniAgentMod.Stubs
{
    internal static class Stub
    {
        internal static System.Exception Missing()
        {
            return new System.NotSupportedException("reference stub: compile-only, not the game");
        }
    }
}
