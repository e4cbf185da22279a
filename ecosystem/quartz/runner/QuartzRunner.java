import java.util.Map;

/**
 * The Quartz runner's entry point (docs/runtime-faults.md, ecosystem/quartz/runner/): it refers to no class of
 * Quartz, so that a jar missing from the class path is named in one line by RunnerProtocol, which loads
 * QuartzLibrary by name, instead of failing in the JVM's launcher.
 */
public final class QuartzRunner {
    /** The class-name prefixes of the jars the runner needs, each with the Debian package that ships it. */
    static final Map<String, String> PACKAGES = Map.of(
            "org/quartz/", "libquartz2-java",
            "org/postgresql/", "libpostgresql-jdbc-java",
            "com/mchange/", "libc3p0-java",
            "org/slf4j/", "libslf4j-java");

    private QuartzRunner() {}

    public static void main(String[] args) {
        RunnerProtocol.serveAndExit("QuartzLibrary", args, PACKAGES);
    }
}
