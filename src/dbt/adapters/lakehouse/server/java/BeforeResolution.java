package lakehouse.server;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;

/**
 * A hint-resolution rule: Spark runs the hint batch before the resolution batch, so this sees
 * the parsed plan before the analyzer runs anything. The analyzer itself runs a CALL (rule
 * InvokeProcedures, Iceberg's procedures included) and the scalar subqueries of a time-travel
 * clause, both before any check rule: outside a Spark Connect operation, CALL and
 * reflect/java_method/try_reflect are refused here (see {@link WritePlans#firstEarlyWrite}).
 */
final class BeforeResolution extends Rule<LogicalPlan> {
    private final SparkSession session;

    BeforeResolution(SparkSession session) {
        this.session = session;
    }

    @Override
    public LogicalPlan apply(LogicalPlan plan) {
        ConnectOperation.refuseOutside(session, plan, WritePlans::firstEarlyWrite);
        return plan;
    }
}
