package lakehouse.server;

import java.util.function.Function;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;

/**
 * Whether the current thread runs a Spark Connect operation, and the refusal when it does not.
 *
 * Spark Connect runs each operation on its own thread, tagged with the job tag
 * SparkConnect_OperationTag_User_..._Session_..._Operation_... in the thread-local property
 * spark.job.tags, and analyses the operation's plans on that thread. JDBC/Thrift statements run
 * on HiveServer2 threads that never carry the tag, nor does the server's own Python (py4j)
 * session. When the server has a token (required off loopback), every Connect call passed it,
 * so a tag means a token holder.
 * Connect's schema and explain requests (AnalyzePlan) run untagged on gRPC threads, so they
 * follow the read-only rules too: harmless, they never write.
 */
final class ConnectOperation {
    static final String JOB_TAGS = "spark.job.tags";
    static final String CONNECT_TAG = "SparkConnect_OperationTag_";
    private static final String ADVICE =
            "; JDBC/Thrift sessions are read-only. Write through Spark Connect (dbt: a target"
                    + " with method: connect, e.g. --target server).";

    private ConnectOperation() {}

    /**
     * The thread carries a Connect operation tag. A session that sets spark.job.tags as a SQL
     * conf (SET spark.job.tags=...) can see it copied into the thread's properties while its own
     * queries run (SQLExecution.withSQLConfPropagated), so such a session is never trusted.
     */
    static boolean isCurrent(SparkSession session) {
        String tags = session.sparkContext().getLocalProperty(JOB_TAGS);
        return tags != null
                && tags.contains(CONNECT_TAG)
                && session.conf().getOption(JOB_TAGS).isEmpty();
    }

    /**
     * Both rules' check: outside a Spark Connect operation, refuse the plan when find names
     * something in it (find returns null for a plan it allows; it is not run for Connect).
     */
    static void refuseOutside(
            SparkSession session, LogicalPlan plan, Function<LogicalPlan, String> find) {
        if (!isCurrent(session)) {
            String found = find.apply(plan);
            if (found != null) {
                refuse(found);
            }
        }
    }

    /** lakehouse server: DROP TABLE (DropTable) is a write; ... (see {@link ReadOnlyRefusal}) */
    private static void refuse(String what) {
        throw unchecked(new ReadOnlyRefusal("lakehouse server: " + what + ADVICE));
    }

    /** Throws a checked exception from a Scala function, as Scala code does. */
    @SuppressWarnings("unchecked")
    private static <T extends Throwable> RuntimeException unchecked(Throwable error) throws T {
        throw (T) error;
    }
}
