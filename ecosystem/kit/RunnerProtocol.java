import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The runner protocol's side of every Java runner (docs/runtime-faults.md), as runner_protocol.js is the Node
 * runners' and alkstore_faults/runner_cli.py the Python runners': the ledger's records, the jobs file, the handler's
 * run around a real sleep, the four subcommands (inspect: protocol 2), and one line naming the Debian package of a
 * jar that is not on the class path. A runner (ecosystem/LIBRARY/runner/) keeps what differs between libraries (its
 * description, its client's enqueue, its worker, its inspect) in a class implementing {@link Runner}, which
 * {@link #serve} loads by name, so that a class of the library missing at run time is caught here, not by the JVM's
 * launcher. It needs nothing but the JDK: JSON is read and written by the small codec below, since Debian's jars
 * carry no JSON library the runners could share without one more package.
 */
public final class RunnerProtocol {
    public static final String USAGE = "describe, enqueue JOBS_FILE, worker or inspect JOBS_FILE";

    private RunnerProtocol() {}

    /** What a library's runner provides; every method may throw, and serve turns the throw into one line. */
    public interface Runner {
        /** The description printed by describe (docs/runtime-faults.md, "describe"); needs no broker. */
        Map<String, Object> describe() throws Exception;

        /** Enqueues each job ({"id", "duration_s", "fail"}) with the library's ordinary client call. */
        void enqueue(List<Map<String, Object>> jobs) throws Exception;

        /** Starts one worker and returns once it runs; the library's own threads keep the JVM up until SIGTERM. */
        void worker() throws Exception;

        /** What the library holds for each job (protocol 2), one state a job. */
        List<Map<String, Object>> inspect(List<Map<String, Object>> jobs) throws Exception;
    }

    /** A job told to fail: the handler throws it after writing its end record; the runner maps it to the library's failure. */
    public static final class JobFailed extends Exception {
        private static final long serialVersionUID = 1L;

        public JobFailed(String job) {
            super("job " + job + " was told to fail");
        }
    }

    /**
     * One ledger record (start, end with ok, ack with accepted, cancelled with by and reason) as one write of one
     * line in append mode, so the records of the threads and processes of one worker interleave whole. mono is
     * System.nanoTime(), which HotSpot reads from CLOCK_MONOTONIC on Linux: the clock of every other ledger.
     */
    public static void record(String ev, String job, Integer attempt, Map<String, Object> extra) throws IOException {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("ev", ev);
        line.put("job", job);
        line.put("worker", System.getenv("ALKSTORE_FAULTS_WORKER"));
        line.put("pid", ProcessHandle.current().pid());
        line.put("attempt", attempt);
        line.put("mono", System.nanoTime() / 1e9);
        line.put("wall", System.currentTimeMillis() / 1000.0);
        line.putAll(extra);
        byte[] bytes = (toJson(line) + "\n").getBytes(StandardCharsets.UTF_8);
        try (OutputStream out = new FileOutputStream(System.getenv("ALKSTORE_FAULTS_LEDGER"), true)) {
            out.write(bytes);
        }
    }

    /**
     * A job's handler: start, a real sleep of its duration (a killed or paused process stops in it), end; then
     * JobFailed when the job was told to fail.
     */
    public static void perform(String job, double durationS, boolean fail, Integer attempt)
            throws IOException, InterruptedException, JobFailed {
        record("start", job, attempt, Map.of());
        Thread.sleep(Math.round(durationS * 1000));
        record("end", job, attempt, Map.of("ok", !fail));
        if (fail) {
            throw new JobFailed(job);
        }
    }

    /** The jobs of an enqueue or inspect call: one JSON object a line (id, duration_s, fail). */
    @SuppressWarnings("unchecked")
    public static List<Map<String, Object>> readJobs(Path path) throws IOException {
        List<Map<String, Object>> jobs = new ArrayList<>();
        for (String line : Files.readAllLines(path, StandardCharsets.UTF_8)) {
            if (!line.isBlank()) {
                jobs.add((Map<String, Object>) new Json(line).document());
            }
        }
        return jobs;
    }

    /**
     * The one line for a class that is not on the class path, naming the Debian package that ships it (packages:
     * a class-name prefix, as "org/quartz/", to the package), or null for any other error.
     */
    public static String missingPackage(Throwable error, Map<String, String> packages) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof NoClassDefFoundError || cause instanceof ClassNotFoundException) {
                String name = String.valueOf(cause.getMessage()).replace('.', '/');
                for (Map.Entry<String, String> entry : packages.entrySet()) {
                    if (name.startsWith(entry.getKey())) {
                        return "runner needs the Debian package " + entry.getValue() + " (class " + name
                                + " is not on the class path): install it (apt-get install -y " + entry.getValue()
                                + ")";
                    }
                }
            }
        }
        return null;
    }

    /**
     * Runs the subcommand in args with the runner class named runnerClass and returns the exit status, or null
     * for a worker that runs on (its library's threads keep the JVM up until SIGTERM): describe prints describe()
     * as one line of JSON; enqueue JOBS_FILE hands the jobs to enqueue(); inspect JOBS_FILE (protocol 2) prints each
     * state of inspect() as one line of JSON. A throw of any is status 1 with one line on stderr (naming the Debian
     * package when a class is missing); anything else is refused with status 2 and the usage.
     */
    public static Integer serve(String runnerClass, String[] args, Map<String, String> packages) {
        String command = args.length > 0 ? args[0] : "";
        boolean known = (command.equals("describe") || command.equals("worker")) && args.length == 1
                || (command.equals("enqueue") || command.equals("inspect")) && args.length == 2;
        if (!known) {
            System.err.println("unknown command " + toJson(String.join(" ", args)) + ": " + USAGE);
            return 2;
        }
        try {
            Runner runner = (Runner) Class.forName(runnerClass).getDeclaredConstructor().newInstance();
            switch (command) {
                case "describe":
                    System.out.println(toJson(runner.describe()));
                    return 0;
                case "enqueue":
                    runner.enqueue(readJobs(Path.of(args[1])));
                    return 0;
                case "inspect":
                    StringBuilder out = new StringBuilder();
                    for (Map<String, Object> state : runner.inspect(readJobs(Path.of(args[1])))) {
                        out.append(toJson(state)).append('\n');
                    }
                    System.out.print(out);
                    return 0;
                default:
                    runner.worker();
                    return null;
            }
        } catch (Throwable error) { // NoClassDefFoundError included: the one line instead of the JVM's trace
            String missing = missingPackage(error, packages);
            if (missing != null) {
                System.err.println(missing);
            } else {
                System.err.println(command + " failed: " + error);
                error.printStackTrace();
            }
            return 1;
        }
    }

    /** Serves args and exits with the status, except a worker that runs on: a runner's main method. */
    public static void serveAndExit(String runnerClass, String[] args, Map<String, String> packages) {
        Integer status = serve(runnerClass, args, packages);
        if (status != null) {
            System.out.flush();
            System.exit(status);
        }
    }

    /** JSON text of a value made of maps, lists, strings, numbers, booleans and null. */
    public static String toJson(Object value) {
        StringBuilder out = new StringBuilder();
        writeJson(value, out);
        return out.toString();
    }

    private static void writeJson(Object value, StringBuilder out) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String) {
            writeString((String) value, out);
        } else if (value instanceof Double || value instanceof Float) {
            double number = ((Number) value).doubleValue();
            if (Double.isNaN(number) || Double.isInfinite(number)) {
                throw new IllegalArgumentException("JSON has no " + number);
            }
            out.append(number);
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof Map) {
            out.append('{');
            String separator = "";
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                out.append(separator);
                writeString(String.valueOf(entry.getKey()), out);
                out.append(": ");
                writeJson(entry.getValue(), out);
                separator = ", ";
            }
            out.append('}');
        } else if (value instanceof List) {
            out.append('[');
            String separator = "";
            for (Object item : (List<?>) value) {
                out.append(separator);
                writeJson(item, out);
                separator = ", ";
            }
            out.append(']');
        } else {
            throw new IllegalArgumentException("no JSON for a " + value.getClass().getName());
        }
    }

    private static void writeString(String text, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /** A reader of one JSON document: objects (as ordered maps), arrays, strings, numbers (as doubles), literals. */
    static final class Json {
        private final String text;
        private int at;

        Json(String text) {
            this.text = text;
        }

        Object document() {
            Object value = value();
            space();
            if (at != text.length()) {
                throw error("trailing characters");
            }
            return value;
        }

        private Object value() {
            space();
            if (at >= text.length()) {
                throw error("a value expected");
            }
            char c = text.charAt(at);
            if (c == '{') {
                return object();
            }
            if (c == '[') {
                return array();
            }
            if (c == '"') {
                return string();
            }
            for (String literal : new String[] {"true", "false", "null"}) {
                if (text.startsWith(literal, at)) {
                    at += literal.length();
                    return literal.equals("null") ? null : Boolean.valueOf(literal);
                }
            }
            int start = at;
            while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
                at++;
            }
            if (start == at) {
                throw error("a value expected");
            }
            return Double.valueOf(text.substring(start, at));
        }

        private Map<String, Object> object() {
            Map<String, Object> map = new LinkedHashMap<>();
            at++;
            space();
            if (peek('}')) {
                return map;
            }
            do {
                space();
                String key = string();
                space();
                expect(':');
                map.put(key, value());
                space();
            } while (peek(','));
            expect('}');
            return map;
        }

        private List<Object> array() {
            List<Object> list = new ArrayList<>();
            at++;
            space();
            if (peek(']')) {
                return list;
            }
            do {
                list.add(value());
                space();
            } while (peek(','));
            expect(']');
            return list;
        }

        private String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (at < text.length() && text.charAt(at) != '"') {
                char c = text.charAt(at++);
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char escaped = text.charAt(at++);
                switch (escaped) {
                    case 'n' -> out.append('\n');
                    case 't' -> out.append('\t');
                    case 'r' -> out.append('\r');
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'u' -> {
                        out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        at += 4;
                    }
                    default -> out.append(escaped);
                }
            }
            expect('"');
            return out.toString();
        }

        private boolean peek(char c) {
            if (at < text.length() && text.charAt(at) == c) {
                at++;
                return true;
            }
            return false;
        }

        private void expect(char c) {
            if (!peek(c)) {
                throw error("'" + c + "' expected");
            }
        }

        private void space() {
            while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
                at++;
            }
        }

        private IllegalArgumentException error(String what) {
            return new IllegalArgumentException("not JSON at character " + at + ": " + what + " in " + text);
        }
    }
}
