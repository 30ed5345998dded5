// Holds a save's session.lock the way Minecraft does while a world is open, until stdin closes.
// Models net.minecraft.util.DirectoryLock.create (1.16+, same in 1.21.11): FileChannel.open(
// <save>/session.lock, CREATE, WRITE), write "☃" (UTF-8), force(true), tryLock() — null means
// another process holds it ("already locked"). Run as a single-file program: java HoldSessionLock.java SAVE
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

public class HoldSessionLock {
    public static void main(String[] args) throws Exception {
        Path lockFile = Path.of(args[0]).resolve("session.lock");
        try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.wrap("☃".getBytes(StandardCharsets.UTF_8)));
            channel.force(true);
            FileLock lock = channel.tryLock();
            System.out.println(lock == null ? "ALREADY_LOCKED" : "LOCKED");
            System.out.flush();
            while (System.in.read() >= 0) {
                // hold the lock until the test closes stdin
            }
        }
    }
}
