package lakehouse.server;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * The check rule: after analysis and before a command runs, a plan that writes (see
 * {@link WritePlans#firstWrite}) is refused unless the thread runs a Spark Connect operation.
 * Delta and Iceberg resolve MERGE, UPDATE and DELETE into their own commands before this
 * check, so it refuses those too.
 */
final class ReadOnlyCheck extends AbstractFunction1<LogicalPlan, BoxedUnit> {
    private final SparkSession session;

    ReadOnlyCheck(SparkSession session) {
        this.session = session;
    }

    @Override
    public BoxedUnit apply(LogicalPlan plan) {
        ConnectOperation.refuseOutside(session, plan, WritePlans::firstWrite);
        return BoxedUnit.UNIT;
    }
}
