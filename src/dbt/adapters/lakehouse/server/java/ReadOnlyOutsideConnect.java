package lakehouse.server;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import scala.Function1;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * The lakehouse server's spark.sql.extensions entry: writes and DDL are refused unless they run
 * inside a Spark Connect operation. So dbt (Spark Connect, with the token) writes, while
 * JDBC/Thrift sessions, and the server's own Python session, only read.
 *
 * Two rules, built for every session (each JDBC connection has its own):
 * {@link BeforeResolution}, a hint-resolution rule, refuses what the analyzer itself would run
 * before any check (CALL, reflection); {@link ReadOnlyCheck}, a check rule, refuses every
 * analyzed plan that writes, before the command runs.
 *
 * Usage: spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension,lakehouse.server.ReadOnlyOutsideConnect
 */
public final class ReadOnlyOutsideConnect
        extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {

    @Override
    public BoxedUnit apply(SparkSessionExtensions extensions) {
        extensions.injectHintResolutionRule(new EarlyRuleBuilder());
        extensions.injectCheckRule(new CheckBuilder());
        return BoxedUnit.UNIT;
    }

    private static final class EarlyRuleBuilder
            extends AbstractFunction1<SparkSession, Rule<LogicalPlan>> {
        @Override
        public Rule<LogicalPlan> apply(SparkSession session) {
            return new BeforeResolution(session);
        }
    }

    private static final class CheckBuilder
            extends AbstractFunction1<SparkSession, Function1<LogicalPlan, BoxedUnit>> {
        @Override
        public Function1<LogicalPlan, BoxedUnit> apply(SparkSession session) {
            return new ReadOnlyCheck(session);
        }
    }
}
