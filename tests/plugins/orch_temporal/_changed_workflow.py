"""A workflow typed like `AgentWorkflow` whose effect handling changed: replay must fail."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from layer0 import TurnOutput
    from neuron_orch_temporal.messages import DispatchResult, TurnRequest, WorkflowInput
    from neuron_orch_temporal.names import EXECUTE_TURN, WORKFLOW_TYPE


@workflow.defn(name=WORKFLOW_TYPE)
class ChangedWorkflow:
    """Runs the turn, then waits a minute instead of carrying out its effects."""

    @workflow.run
    async def run(self, params: WorkflowInput) -> DispatchResult:
        request = TurnRequest(
            workflow_id=workflow.info().workflow_id,
            agent=params.agent,
            input=params.input,
            route=params.chain.route(),
        )
        output: TurnOutput = await workflow.execute_activity(
            EXECUTE_TURN,
            request,
            result_type=TurnOutput,
            start_to_close_timeout=timedelta(minutes=1),
        )
        await workflow.sleep(60)
        return DispatchResult(
            workflow_id=request.workflow_id,
            agent=params.agent,
            output=output,
            route=(),
            delegations=(),
        )
