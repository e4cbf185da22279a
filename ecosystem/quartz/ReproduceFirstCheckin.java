import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import org.quartz.Job;
import org.quartz.JobBuilder;
import org.quartz.JobExecutionContext;
import org.quartz.JobExecutionException;
import org.quartz.Scheduler;
import org.quartz.SimpleScheduleBuilder;
import org.quartz.TriggerBuilder;
import org.quartz.impl.StdSchedulerFactory;

/**
 * A standalone reproduction (Quartz 2.3.2 and the Postgres JDBC driver only, nothing of alkstore): a clustered
 * Quartz node whose first cluster check-in fails runs a job it is already running a second time, against the
 * clustering page's "Only one node will fire the job for each firing."
 *
 * Quartz's tables as its jar ships them (tables_postgres.sql) hold no row in QRTZ_LOCKS; the first node to take a
 * lock inserts it. When two nodes start at once on new tables, the second one's INSERT of the STATE_ACCESS row waits
 * on the first one's uncommitted row and fails with a duplicate key when that commits: its first check-in fails
 * ("ClusterManager: Error managing cluster"), its scheduler starts anyway and fires a due job, and its next check-in,
 * still its first, finds the fired trigger of its own instance with no scheduler-state row ("Found orphaned fired
 * triggers for instance"), takes itself for a failed instance, and schedules its own job in progress for recovery:
 * the job runs again once its first run ends. Here the first node's check-in transaction is held open by hand (the
 * same INSERT, committed 1.5 s later), so the race is lost every time. The alkstore runtime-faults runs met it as two
 * worker JVMs started together: docs/runtime-faults.md, "What the runs show".
 *
 * Run: java -cp /usr/share/java/quartz2.jar:/usr/share/java/c3p0.jar:/usr/share/java/postgresql.jar:\
 * /usr/share/java/slf4j-api.jar ecosystem/quartz/ReproduceFirstCheckin.java (QUARTZ_REPRO_JDBC, default
 * jdbc:postgresql://127.0.0.1:5432/postgres as postgres, trust). Prints REPRODUCED: when the job ran twice.
 */
public final class ReproduceFirstCheckin {
    static final String DDL = "org/quartz/impl/jdbcjobstore/tables_postgres.sql";

    /** The job: one line a start and an end in the file its data names, around a 3 s sleep. */
    public static class SlowJob implements Job {
        @Override
        public void execute(JobExecutionContext context) throws JobExecutionException {
            Path runs = Path.of(context.getMergedJobDataMap().getString("runs"));
            try {
                write(runs, "start recovering=" + context.isRecovering());
                Thread.sleep(3000);
                write(runs, "end");
            } catch (Exception error) {
                throw new JobExecutionException(error, false);
            }
        }

        static void write(Path runs, String line) throws Exception {
            Files.writeString(runs, line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        }
    }

    public static void main(String[] args) throws Exception {
        Thread.currentThread().setContextClassLoader(ReproduceFirstCheckin.class.getClassLoader());
        String url = System.getenv().getOrDefault("QUARTZ_REPRO_JDBC", "jdbc:postgresql://127.0.0.1:5432/postgres");
        String prefix = "QRTZ_R" + UUID.randomUUID().toString().substring(0, 8).toUpperCase() + "_";
        Path runs = Files.createTempFile("quartz-runs", ".txt");
        String ddl = new String(
                Scheduler.class.getClassLoader().getResourceAsStream(DDL).readAllBytes(), StandardCharsets.UTF_8);
        try (Connection setup = DriverManager.getConnection(url, "postgres", "");
                Statement statement = setup.createStatement()) {
            for (String sql : ddl.replaceAll("(?m)^--.*$", "").replace("QRTZ_", prefix).split(";")) {
                if (!sql.isBlank() && !sql.trim().equalsIgnoreCase("commit")) {
                    statement.execute(sql);
                }
            }
        }
        Properties properties = new Properties();
        String[][] settings = {
            {"org.quartz.scheduler.instanceName", "repro"},
            {"org.quartz.scheduler.instanceId", "AUTO"},
            {"org.quartz.scheduler.skipUpdateCheck", "true"},
            {"org.quartz.threadPool.threadCount", "1"},
            // the job class lives in this source file's class loader (java File.java): Quartz's threads must see it
            {"org.quartz.scheduler.threadsInheritContextClassLoaderOfInitializer", "true"},
            {"org.quartz.threadPool.threadsInheritContextClassLoaderOfInitializingThread", "true"},
            {"org.quartz.jobStore.class", "org.quartz.impl.jdbcjobstore.JobStoreTX"},
            {"org.quartz.jobStore.driverDelegateClass", "org.quartz.impl.jdbcjobstore.PostgreSQLDelegate"},
            {"org.quartz.jobStore.tablePrefix", prefix},
            {"org.quartz.jobStore.useProperties", "true"},
            {"org.quartz.jobStore.isClustered", "true"},
            {"org.quartz.jobStore.clusterCheckinInterval", "1000"},
            // after a failed check-in the next comes this long after it (15 s by default): the runner's setting
            {"org.quartz.scheduler.dbFailureRetryInterval", "1000"},
            {"org.quartz.jobStore.dataSource", "db"},
            {"org.quartz.dataSource.db.driver", "org.postgresql.Driver"},
            {"org.quartz.dataSource.db.URL", url},
            {"org.quartz.dataSource.db.user", "postgres"},
            {"org.quartz.dataSource.db.password", ""},
            {"org.quartz.dataSource.db.maxConnections", "4"},
        };
        for (String[] setting : settings) {
            properties.setProperty(setting[0], setting[1]);
        }
        Scheduler node = new StdSchedulerFactory(properties).getScheduler();
        node.scheduleJob(
                JobBuilder.newJob(SlowJob.class).withIdentity("job").requestRecovery(true)
                        .usingJobData("runs", runs.toString()).build(),
                TriggerBuilder.newTrigger().withIdentity("once").startNow()
                        .withSchedule(SimpleScheduleBuilder.simpleSchedule().withMisfireHandlingInstructionFireNow())
                        .build());
        try (Connection other = DriverManager.getConnection(url, "postgres", "")) {
            other.setAutoCommit(false); // the other node's first check-in: it inserts the missing lock row
            try (Statement statement = other.createStatement()) {
                statement.execute("INSERT INTO " + prefix + "LOCKS (SCHED_NAME, LOCK_NAME) VALUES ('repro', "
                        + "'STATE_ACCESS')");
            }
            Thread starting = new Thread(() -> {
                try {
                    node.start(); // its first check-in waits on the other node's row
                } catch (Exception error) {
                    throw new IllegalStateException(error);
                }
            });
            starting.start();
            Thread.sleep(1500);
            other.commit();
            starting.join();
        }
        Thread.sleep(10000); // the first run (3 s), the next check-ins (every 1 s), a second run if any (3 s)
        node.shutdown(true);
        List<String> lines = Files.readAllLines(runs);
        long started = lines.stream().filter(line -> line.startsWith("start")).count();
        try (Connection cleanup = DriverManager.getConnection(url, "postgres", "");
                Statement statement = cleanup.createStatement()) {
            for (String table : List.of("FIRED_TRIGGERS", "PAUSED_TRIGGER_GRPS", "SCHEDULER_STATE", "LOCKS",
                    "SIMPLE_TRIGGERS", "CRON_TRIGGERS", "SIMPROP_TRIGGERS", "BLOB_TRIGGERS", "TRIGGERS",
                    "JOB_DETAILS", "CALENDARS")) {
                statement.execute("DROP TABLE IF EXISTS " + prefix + table);
            }
        }
        if (started >= 2) {
            System.out.println("REPRODUCED: one firing of a job that requests recovery ran " + started
                    + " times on the one node whose first check-in failed (" + String.join(", ", lines) + ")");
        } else {
            System.out.println("NOT REPRODUCED: the job ran " + started + " time(s) (" + String.join(", ", lines)
                    + ")");
        }
    }
}
