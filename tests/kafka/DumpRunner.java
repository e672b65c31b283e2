import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Runs Kafka's DumpLogSegments many times in one JVM, so one JVM start serves a whole test corpus.
 *
 * Usage: java -cp "LIB/*:DIR" DumpRunner MAIN_CLASS REQUESTS OUT_DIR [PRISTINE WORK]
 * REQUESTS holds one run per line, its arguments separated by TAB. For run i the runner writes
 * OUT_DIR/i.out, OUT_DIR/i.err (the bytes the tool wrote) and OUT_DIR/i.rc (its exit code).
 * Some releases rewrite the files they dump (an index whose size is not a multiple of its entry
 * size is truncated), so with PRISTINE and WORK every file of PRISTINE is copied over WORK before
 * the first run, and after each run what it changed in the directories it named: every run sees the
 * original bytes.
 *
 * System.out/err are replaced before any Kafka or Scala class loads, by streams whose target is
 * switched per run: Scala's Console captures System.out once, so a later System.setOut would miss it.
 * Kafka's Exit procedures throw instead of ending the JVM; an exception escaping main is printed as
 * the JVM prints it ("Exception in thread "main" " + stack trace) with exit code 1.
 */
public final class DumpRunner {
    private static final class Switch extends OutputStream {
        private ByteArrayOutputStream target = new ByteArrayOutputStream();

        @Override
        public synchronized void write(int b) {
            target.write(b);
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            target.write(b, off, len);
        }

        synchronized byte[] take() {
            byte[] bytes = target.toByteArray();
            target = new ByteArrayOutputStream();
            return bytes;
        }
    }

    private static final class ExitSignal extends RuntimeException {
        final int code;

        ExitSignal(int code) {
            super("exit " + code, null, false, false);
            this.code = code;
        }
    }

    public static void main(String[] args) throws Exception {
        Switch out = new Switch();
        Switch err = new Switch();
        PrintStream realErr = System.err;
        PrintStream outStream = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream errStream = new PrintStream(err, true, StandardCharsets.UTF_8);
        System.setOut(outStream);
        System.setErr(errStream);

        throwOnExit();
        Method main = Class.forName(args[0]).getMethod("main", String[].class);
        List<String> requests = Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8);
        Path outDir = Paths.get(args[2]);
        Files.createDirectories(outDir);
        // SLF4J prints its one-time "no binding" warning when the first logger is made; make it now,
        // so it lands in the discarded set-up output and not in whichever case logs first.
        try {
            Class.forName("org.slf4j.LoggerFactory").getMethod("getLogger", String.class).invoke(null, "DumpRunner");
        } catch (ReflectiveOperationException absent) {
            // no SLF4J on this release's classpath: nothing to warm up
        }
        out.take();
        err.take();
        Path pristine = args.length > 4 ? Paths.get(args[3]) : null;
        Path work = args.length > 4 ? Paths.get(args[4]).toAbsolutePath().normalize() : null;
        restore(pristine, work, null);
        for (int i = 0; i < requests.size(); i++) {
            String line = requests.get(i);
            String[] toolArgs = line.isEmpty() ? new String[0] : line.split("\t", -1);
            int code = 0;
            try {
                main.invoke(null, (Object) toolArgs);
            } catch (InvocationTargetException wrapped) {
                Throwable cause = wrapped.getCause();
                if (cause instanceof ExitSignal) {
                    code = ((ExitSignal) cause).code;
                } else {
                    errStream.print("Exception in thread \"main\" ");
                    cause.printStackTrace(errStream);
                    code = 1;
                }
            } catch (ExitSignal signal) {
                code = signal.code;
            } catch (Throwable unexpected) {
                realErr.println("DumpRunner: run " + i + " failed outside the tool: " + unexpected);
                throw unexpected;
            }
            outStream.flush();
            errStream.flush();
            write(outDir.resolve(i + ".out"), out.take());
            write(outDir.resolve(i + ".err"), err.take());
            write(outDir.resolve(i + ".rc"), Integer.toString(code).getBytes(StandardCharsets.UTF_8));
            restore(pristine, work, dirsOf(toolArgs));
        }
    }

    /**
     * The directories of the files a run named with --files (and a named directory itself): the tool
     * opens nothing else (an index's .log and .index are beside it).
     */
    private static Set<Path> dirsOf(String[] toolArgs) {
        Set<Path> dirs = new HashSet<>();
        for (int i = 0; i + 1 < toolArgs.length; i++) {
            if (toolArgs[i].equals("--files")) {
                for (String name : toolArgs[i + 1].split(",")) {
                    Path file = Paths.get(name).toAbsolutePath().normalize();
                    dirs.add(file);
                    if (file.getParent() != null) {
                        dirs.add(file.getParent());
                    }
                }
            }
        }
        return dirs;
    }

    /**
     * Kafka's Exit.setExitProcedure/setHaltProcedure with a procedure that throws ExitSignal. Exit is
     * org.apache.kafka.common.utils.Exit up to 4.3 and org.apache.kafka.common.utils.internals.Exit from
     * 4.4 (clients/src/main/java/org/apache/kafka/common/utils/internals/Exit.java), so it is found by name.
     */
    private static void throwOnExit() throws ReflectiveOperationException {
        Class<?> exit;
        try {
            exit = Class.forName("org.apache.kafka.common.utils.internals.Exit");
        } catch (ClassNotFoundException beforeFourFour) {
            exit = Class.forName("org.apache.kafka.common.utils.Exit");
        }
        Class<?> procedure = Class.forName(exit.getName() + "$Procedure");
        Object thrower = Proxy.newProxyInstance(procedure.getClassLoader(), new Class<?>[] {procedure},
            (proxy, method, methodArgs) -> {
                if (method.getName().equals("execute")) {
                    throw new ExitSignal((Integer) methodArgs[0]);
                }
                if (method.getName().equals("equals")) {
                    return proxy == methodArgs[0];
                }
                return method.getName().equals("hashCode") ? (Object) System.identityHashCode(proxy) : "DumpRunner exit";
            });
        exit.getMethod("setExitProcedure", procedure).invoke(null, thrower);
        exit.getMethod("setHaltProcedure", procedure).invoke(null, thrower);
    }

    private static void write(Path path, byte[] bytes) throws IOException {
        Files.write(path, bytes);
    }

    /** Work file -> its size and modification time right after the last copy. */
    private static final Map<Path, List<Long>> COPIED = new HashMap<>();

    /** Copies back what a run changed in ``dirs`` (every file when null). */
    private static void restore(Path pristine, Path work, Set<Path> dirs) throws IOException {
        if (pristine == null) {
            return;
        }
        if (COPIED.isEmpty()) {
            try (Stream<Path> files = Files.walk(pristine)) {
                for (Path source : (Iterable<Path>) files::iterator) {
                    if (Files.isRegularFile(source)) {
                        copy(source, work.resolve(pristine.relativize(source).toString()));
                    }
                }
            }
            return;
        }
        // Only what a run changed is copied back: a stat per file of the run's directories instead of a
        // copy per file (or a stat of every file of the corpus after every run).
        for (Map.Entry<Path, List<Long>> entry : COPIED.entrySet()) {
            Path target = entry.getKey();
            if (dirs != null && !dirs.contains(target.getParent())) {
                continue;
            }
            if (!Files.exists(target) || !stamp(target).equals(entry.getValue())) {
                copy(pristine.resolve(work.relativize(target).toString()), target);
            }
        }
    }

    private static void copy(Path source, Path target) throws IOException {
        Files.createDirectories(target.getParent());
        Files.copy(source, target, StandardCopyOption.REPLACE_EXISTING);
        COPIED.put(target, stamp(target));
    }

    private static List<Long> stamp(Path file) throws IOException {
        return List.of(Files.size(file), Files.getLastModifiedTime(file).toMillis());
    }
}
