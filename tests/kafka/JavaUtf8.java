import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Reads hex lines from stdin and, for each, prints the hex of new String(bytes, UTF_8) re-encoded
 * as UTF-8: the JDK's own decoding (with its replacement rules), for kdump's property tests.
 * The decoded string holds no lone surrogates, so the re-encoding is lossless. Each answer is
 * flushed at once, so one process can serve a whole test session over a pipe.
 */
public final class JavaUtf8 {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.US_ASCII);
        StringBuilder hex = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) {
            byte[] bytes = new byte[line.length() / 2];
            for (int i = 0; i < bytes.length; i++) {
                bytes[i] = (byte) Integer.parseInt(line.substring(2 * i, 2 * i + 2), 16);
            }
            byte[] decoded = new String(bytes, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8);
            hex.setLength(0);
            for (byte b : decoded) {
                hex.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
            }
            out.println(hex);
        }
    }
}
