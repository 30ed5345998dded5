package dev.mcb.world.core;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one rule deciding whether an {@code /ai} line is a command or a prompt: a line is a command only
 * when it is <em>exactly</em> one of the forms below; anything else is a prompt for the AI ("stop the
 * tower at y=80" is a prompt). Keywords are case-insensitive, runs of spaces count as one, and a leading
 * {@code /ai} is ignored. The embedded host and the bridge use the same rule
 * ({@code mcb_common/chatcommands.py}); {@code tests/contract/test_world_chat.py} checks both hosts.
 *
 * <pre>
 *   stop | cancel                          stop
 *   resume | status                        resume, status
 *   project create NAME | project use NAME NAME: [A-Za-z0-9][A-Za-z0-9_-]{0,39}
 *   area set R                             R: an integer (blocks around the player)
 *   area set X1 Y1 Z1 X2 Y2 Z2             integers, or ~ / ~N relative to the player
 *   undo [OP]                              OP: op_ + letters/digits
 *   protect PART [off]                     PART: pt_ + letters/digits
 *   camera save NAME
 *   preview | apply | reject               the player's prepared plan (docs/chat.md, Previews)
 *   who | who X1 Y1 Z1 X2 Y2 Z2            the block looked at, or a box (integers, or ~ / ~N)
 * </pre>
 * Values are only checked for their shape here; ranges and existence are the bridge's business.
 */
public final class ChatCommands {
    private static final String NAME = "[A-Za-z0-9][A-Za-z0-9_-]{0,39}";
    private static final String COORD = "(?:-?\\d{1,8}|~(?:-?\\d{1,8})?)";
    private static final Pattern FORM = Pattern.compile("(?i)(?:/ai\\s+)?(?:"
            + "(?<stop>stop|cancel)"
            + "|(?<resume>resume)"
            + "|(?<status>status)"
            + "|(?<plan>preview|apply|reject)"
            + "|project\\s+(?<project>create|use)\\s+(?<pname>" + NAME + ")"
            + "|area\\s+set\\s+(?<radius>\\d{1,8})"
            + "|area\\s+set\\s+(?<box>" + COORD + "(?:\\s+" + COORD + "){5})"
            + "|undo(?:\\s+(?<op>op_[A-Za-z0-9]{1,64}))?"
            + "|protect\\s+(?<part>pt_[A-Za-z0-9]{1,64})(?:\\s+(?<off>off))?"
            + "|camera\\s+save\\s+(?<cname>" + NAME + ")"
            + "|(?<who>who)(?:\\s+(?<wbox>" + COORD + "(?:\\s+" + COORD + "){5}))?"
            + ")");

    /** Command names on the wire and in the bridge. */
    public static final List<String> NAMES = List.of("stop", "resume", "status", "project create", "project use",
            "area set", "undo", "protect", "camera save", "who", "preview", "apply", "reject");

    /** A parsed command: {@code name} from {@link #NAMES}, its arguments in order (keywords lower-cased). */
    public record Command(String name, List<String> args) {
    }

    private ChatCommands() {
    }

    /** The command the whole line is, or empty when it is a prompt. */
    public static Optional<Command> parse(String text) {
        if (text == null) {
            return Optional.empty();
        }
        Matcher m = FORM.matcher(text.strip());
        if (!m.matches()) {
            return Optional.empty();
        }
        if (m.group("stop") != null) {
            return Optional.of(new Command("stop", List.of()));
        }
        if (m.group("resume") != null) {
            return Optional.of(new Command("resume", List.of()));
        }
        if (m.group("status") != null) {
            return Optional.of(new Command("status", List.of()));
        }
        if (m.group("plan") != null) {
            return Optional.of(new Command(m.group("plan").toLowerCase(Locale.ROOT), List.of()));
        }
        if (m.group("project") != null) {
            return Optional.of(new Command("project " + m.group("project").toLowerCase(Locale.ROOT),
                    List.of(m.group("pname"))));
        }
        if (m.group("radius") != null) {
            return Optional.of(new Command("area set", List.of(m.group("radius"))));
        }
        if (m.group("box") != null) {
            return Optional.of(new Command("area set", List.of(m.group("box").split("\\s+"))));
        }
        if (m.group("part") != null) {
            return Optional.of(new Command("protect", m.group("off") == null ? List.of(m.group("part"))
                    : List.of(m.group("part"), "off")));
        }
        if (m.group("cname") != null) {
            return Optional.of(new Command("camera save", List.of(m.group("cname"))));
        }
        if (m.group("who") != null) {
            return Optional.of(new Command("who", m.group("wbox") == null ? List.of()
                    : List.of(m.group("wbox").split("\\s+"))));
        }
        // only "undo [op]" is left
        return Optional.of(new Command("undo", m.group("op") == null ? List.of() : List.of(m.group("op"))));
    }
}
