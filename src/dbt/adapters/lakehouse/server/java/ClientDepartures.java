package lakehouse.server;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.Filter;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.filter.AbstractFilter;
import org.apache.spark.SparkThrowable;

/**
 * Quiets what Spark 4.1's Connect server prints when a client leaves, and only that.
 *
 * A Python client that stops its session (spark.stop(), and dbt's connect method at exit)
 * while a result still streams, or while its ReleaseExecute calls are still on their way, makes
 * the server print, per client, with Java stack traces:
 *
 * <ul>
 *   <li>ErrorUtils, ERROR: "Spark Connect RPC error during: async-grpc-response-sender" with
 *       INVALID_CURSOR.DISCONNECTED (the session closed under a result being sent) and "during:
 *       releaseExecute" with INVALID_HANDLE.SESSION_CLOSED (a release arriving after the
 *       session's);
 *   <li>from the JVM's default handler, "Exception in thread SparkConnectExecuteThread_..."
 *       IllegalStateException, thrown while the operation is closed after its session was
 *       (ExecuteEventsManager.postClosed: "... is not Started for event Closed", "... is not
 *       within statuses ... for event Closed") or answered after it completed
 *       (ExecuteResponseObserver.onError: "Stream onError can't be called after stream
 *       completed").
 * </ul>
 *
 * The client has gone, so nobody is waiting for these; every other error of those loggers and
 * threads still prints. Installed once by the server (app.py) after its session started.
 */
public final class ClientDepartures {
    static final String ERROR_UTILS = "org.apache.spark.sql.connect.utils.ErrorUtils";
    static final String EXECUTE_THREAD = "SparkConnectExecuteThread_";
    private static final String RPC_ERROR = "Spark Connect RPC error during: ";
    /** (the RPC ErrorUtils names, the error condition) of a client that left. */
    private static final String[][] DEPARTED = {
        {"async-grpc-response-sender", "INVALID_CURSOR.DISCONNECTED"},
        {"releaseExecute", "INVALID_HANDLE.SESSION_CLOSED"},
    };

    private ClientDepartures() {}

    public static void quiet() {
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        Configuration configuration = context.getConfiguration();
        LoggerConfig logger = configuration.getLoggerConfig(ERROR_UTILS);
        if (!logger.getName().equals(ERROR_UTILS)) { // inherited: a logger of its own
            logger = new LoggerConfig(ERROR_UTILS, logger.getLevel(), true);
            configuration.addLogger(ERROR_UTILS, logger);
        }
        logger.addFilter(new DepartedClientFilter());
        context.updateLoggers();
        Thread.setDefaultUncaughtExceptionHandler(
                new Uncaught(Thread.getDefaultUncaughtExceptionHandler()));
    }

    /** ErrorUtils' line for a client that left (DEPARTED). */
    static boolean departed(String message, Throwable thrown) {
        if (message == null || !(thrown instanceof SparkThrowable)) {
            return false;
        }
        String condition = ((SparkThrowable) thrown).getCondition();
        for (String[] rpcAndCondition : DEPARTED) {
            if (message.startsWith(RPC_ERROR + rpcAndCondition[0] + ".")
                    && rpcAndCondition[1].equals(condition)) {
                return true;
            }
        }
        return false;
    }

    /** An operation's thread failing to close or answer an operation whose client left. */
    static boolean closedAfterDeparture(Thread thread, Throwable thrown) {
        if (!(thrown instanceof IllegalStateException)
                || !thread.getName().startsWith(EXECUTE_THREAD)) {
            return false;
        }
        StackTraceElement[] frames = thrown.getStackTrace();
        return (frames.length > 0 && is(frames[0], ".ExecuteResponseObserver", "onError"))
                || (frames.length > 1
                        && is(frames[0], ".ExecuteEventsManager", "assertStatus")
                        && is(frames[1], ".ExecuteEventsManager", "postClosed"));
    }

    private static boolean is(StackTraceElement frame, String classSuffix, String method) {
        return frame.getClassName().endsWith(classSuffix) && frame.getMethodName().equals(method);
    }

    private static final class DepartedClientFilter extends AbstractFilter {
        DepartedClientFilter() {
            super(Filter.Result.DENY, Filter.Result.NEUTRAL);
        }

        @Override
        public Filter.Result filter(LogEvent event) {
            String message =
                    event.getMessage() == null ? null : event.getMessage().getFormattedMessage();
            return departed(message, event.getThrown()) ? onMatch : onMismatch;
        }
    }

    /** The JVM's default handling (or the handler installed before), minus departures. */
    private static final class Uncaught implements Thread.UncaughtExceptionHandler {
        private final Thread.UncaughtExceptionHandler previous;

        Uncaught(Thread.UncaughtExceptionHandler previous) {
            this.previous = previous;
        }

        @Override
        public void uncaughtException(Thread thread, Throwable thrown) {
            if (closedAfterDeparture(thread, thrown)) {
                return;
            }
            if (previous != null) {
                previous.uncaughtException(thread, thrown);
            } else { // as ThreadGroup.uncaughtException prints it
                System.err.print("Exception in thread \"" + thread.getName() + "\" ");
                thrown.printStackTrace(System.err);
            }
        }
    }
}
