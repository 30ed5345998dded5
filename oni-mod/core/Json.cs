// A small JSON reader/writer for the mod core (.NET Framework 4.x has no System.Text.Json, and the
// game ships its own Newtonsoft that a mod should not depend on; see docs/oni/mod.md).
// Reader: objects -> JsonObject (ordered), arrays -> List<object>, strings, bool, null, and numbers
// as long when the token has no fraction or exponent (so "1.0" is not an integer), else double.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace OniAgentMod.Core
{
    public sealed class JsonObject
    {
        private readonly List<KeyValuePair<string, object>> items = new List<KeyValuePair<string, object>>();

        public JsonObject Add(string key, object value)
        {
            for (int i = 0; i < items.Count; i++)
            {
                if (items[i].Key == key) { items[i] = new KeyValuePair<string, object>(key, value); return this; }
            }
            items.Add(new KeyValuePair<string, object>(key, value));
            return this;
        }

        public bool Has(string key) { object v; return TryGet(key, out v); }

        public bool TryGet(string key, out object value)
        {
            foreach (var kv in items) { if (kv.Key == key) { value = kv.Value; return true; } }
            value = null;
            return false;
        }

        public IEnumerable<string> Keys { get { foreach (var kv in items) yield return kv.Key; } }
        public IList<KeyValuePair<string, object>> Items { get { return items; } }
    }

    public sealed class JsonException : Exception
    {
        public JsonException(string message) : base(message) { }
    }

    public static class Json
    {
        public const int MaxDepth = 32;

        public static object Parse(string text)
        {
            int pos = 0;
            object v = ReadValue(text, ref pos, 0);
            SkipWs(text, ref pos);
            if (pos != text.Length) throw new JsonException("trailing characters at " + pos);
            return v;
        }

        private static void SkipWs(string s, ref int p)
        {
            while (p < s.Length && (s[p] == ' ' || s[p] == '\t' || s[p] == '\n' || s[p] == '\r')) p++;
        }

        private static object ReadValue(string s, ref int p, int depth)
        {
            if (depth > MaxDepth) throw new JsonException("nested too deeply");
            SkipWs(s, ref p);
            if (p >= s.Length) throw new JsonException("unexpected end");
            char c = s[p];
            if (c == '{')
            {
                p++;
                var o = new JsonObject();
                SkipWs(s, ref p);
                if (p < s.Length && s[p] == '}') { p++; return o; }
                while (true)
                {
                    SkipWs(s, ref p);
                    if (p >= s.Length || s[p] != '"') throw new JsonException("expected a key at " + p);
                    string key = ReadString(s, ref p);
                    SkipWs(s, ref p);
                    if (p >= s.Length || s[p] != ':') throw new JsonException("expected ':' at " + p);
                    p++;
                    o.Add(key, ReadValue(s, ref p, depth + 1));
                    SkipWs(s, ref p);
                    if (p < s.Length && s[p] == ',') { p++; continue; }
                    if (p < s.Length && s[p] == '}') { p++; return o; }
                    throw new JsonException("expected ',' or '}' at " + p);
                }
            }
            if (c == '[')
            {
                p++;
                var a = new List<object>();
                SkipWs(s, ref p);
                if (p < s.Length && s[p] == ']') { p++; return a; }
                while (true)
                {
                    a.Add(ReadValue(s, ref p, depth + 1));
                    SkipWs(s, ref p);
                    if (p < s.Length && s[p] == ',') { p++; continue; }
                    if (p < s.Length && s[p] == ']') { p++; return a; }
                    throw new JsonException("expected ',' or ']' at " + p);
                }
            }
            if (c == '"') return ReadString(s, ref p);
            if (Lit(s, ref p, "true")) return true;
            if (Lit(s, ref p, "false")) return false;
            if (Lit(s, ref p, "null")) return null;
            return ReadNumber(s, ref p);
        }

        private static bool Lit(string s, ref int p, string word)
        {
            if (string.CompareOrdinal(s, p, word, 0, word.Length) == 0) { p += word.Length; return true; }
            return false;
        }

        private static object ReadNumber(string s, ref int p)
        {
            int start = p;
            bool integer = true;
            if (p < s.Length && s[p] == '-') p++;
            int digits = p;
            while (p < s.Length && char.IsDigit(s[p])) p++;
            if (p == digits) throw new JsonException("unexpected character at " + start);
            if (s[digits] == '0' && p - digits > 1) throw new JsonException("leading zero at " + start);
            if (p < s.Length && s[p] == '.')
            {
                integer = false; p++;
                int f = p;
                while (p < s.Length && char.IsDigit(s[p])) p++;
                if (p == f) throw new JsonException("bad number at " + start);
            }
            if (p < s.Length && (s[p] == 'e' || s[p] == 'E'))
            {
                integer = false; p++;
                if (p < s.Length && (s[p] == '+' || s[p] == '-')) p++;
                int e = p;
                while (p < s.Length && char.IsDigit(s[p])) p++;
                if (p == e) throw new JsonException("bad exponent at " + start);
            }
            string tok = s.Substring(start, p - start);
            long l;
            if (integer && long.TryParse(tok, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out l)) return l;
            // a number beyond double's range (1e400) is refused, not read as infinity: .NET Framework's
            // double.Parse throws OverflowException there (an unhandled 500 before), newer runtimes
            // return infinity; both end here as an invalid document
            double d;
            if (!double.TryParse(tok, NumberStyles.Float, CultureInfo.InvariantCulture, out d) || double.IsInfinity(d) || double.IsNaN(d))
                throw new JsonException("number out of range at " + start);
            return d;
        }

        private static string ReadString(string s, ref int p)
        {
            p++; // opening quote
            var sb = new StringBuilder();
            while (p < s.Length)
            {
                char c = s[p++];
                if (c == '"') return sb.ToString();
                if (c < 0x20) throw new JsonException("control character in string");
                if (c != '\\') { sb.Append(c); continue; }
                if (p >= s.Length) break;
                char e = s[p++];
                switch (e)
                {
                    case '"': sb.Append('"'); break;
                    case '\\': sb.Append('\\'); break;
                    case '/': sb.Append('/'); break;
                    case 'b': sb.Append('\b'); break;
                    case 'f': sb.Append('\f'); break;
                    case 'n': sb.Append('\n'); break;
                    case 'r': sb.Append('\r'); break;
                    case 't': sb.Append('\t'); break;
                    case 'u':
                        if (p + 4 > s.Length) throw new JsonException("bad \\u escape");
                        int code;
                        if (!int.TryParse(s.Substring(p, 4), NumberStyles.HexNumber, CultureInfo.InvariantCulture, out code))
                            throw new JsonException("bad \\u escape");
                        sb.Append((char)code); p += 4; break;
                    default: throw new JsonException("bad escape \\" + e);
                }
            }
            throw new JsonException("unterminated string");
        }

        public static string Write(object value)
        {
            var sb = new StringBuilder();
            WriteValue(sb, value);
            return sb.ToString();
        }

        private static void WriteValue(StringBuilder sb, object v)
        {
            if (v == null) { sb.Append("null"); return; }
            if (v is string) { WriteString(sb, (string)v); return; }
            if (v is bool) { sb.Append((bool)v ? "true" : "false"); return; }
            if (v is int || v is long) { sb.Append(Convert.ToInt64(v).ToString(CultureInfo.InvariantCulture)); return; }
            if (v is float || v is double)
            {
                double d = Convert.ToDouble(v);
                if (double.IsNaN(d) || double.IsInfinity(d)) { sb.Append("null"); return; }
                sb.Append(d.ToString("R", CultureInfo.InvariantCulture)); return;
            }
            var o = v as JsonObject;
            if (o != null)
            {
                sb.Append('{');
                bool first = true;
                foreach (var kv in o.Items)
                {
                    if (!first) sb.Append(',');
                    first = false;
                    WriteString(sb, kv.Key); sb.Append(':'); WriteValue(sb, kv.Value);
                }
                sb.Append('}');
                return;
            }
            var list = v as System.Collections.IEnumerable;
            if (list != null)
            {
                sb.Append('[');
                bool first = true;
                foreach (var item in list) { if (!first) sb.Append(','); first = false; WriteValue(sb, item); }
                sb.Append(']');
                return;
            }
            throw new ArgumentException("cannot write " + v.GetType().Name + " as JSON");
        }

        private static void WriteString(StringBuilder sb, string s)
        {
            sb.Append('"');
            foreach (char c in s)
            {
                switch (c)
                {
                    case '"': sb.Append("\\\""); break;
                    case '\\': sb.Append("\\\\"); break;
                    case '\n': sb.Append("\\n"); break;
                    case '\r': sb.Append("\\r"); break;
                    case '\t': sb.Append("\\t"); break;
                    default:
                        if (c < 0x20) sb.Append("\\u").Append(((int)c).ToString("x4")); else sb.Append(c);
                        break;
                }
            }
            sb.Append('"');
        }
    }
}
