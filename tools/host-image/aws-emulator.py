#!/usr/bin/env python3
"""The rehearsal's AWS emulator: moto's server (its arguments as given), with the one call moto lacks.

moto 5.2.5 has no CloudFormation SignalResource (it answers "The signal_resource action has not been
implemented"), which the PgBouncer engine's hosts call once both listeners serve, or when their
bootstrap fails. Added here as CloudFormation records a signal: an event of the signalled resource,
"Received <status> signal with UniqueId <id>", read back with DescribeStackEvents. It refuses what
CloudFormation refuses (a stack or logical id that does not exist, a status other than SUCCESS or
FAILURE) and, as moto checks no signatures, a request not SigV4-signed for CloudFormation in the stack's
Region. Nothing else of moto changes; its CloudFormation stays no judge of templates.
"""
import re
import sys

from moto.cloudformation.exceptions import CloudFormationError, ValidationError
from moto.cloudformation.models import Event
from moto.cloudformation.responses import CloudFormationResponse
from moto.core.responses import EmptyResult
from moto.server import main


class SignatureError(CloudFormationError):
    code = "IncompleteSignature"


def signal_resource(self):
    stack = self.cloudformation_backend.get_stack(self._get_param("StackName"))
    logical_id = self._get_param("LogicalResourceId")
    unique_id = self._get_param("UniqueId")
    status = self._get_param("Status")
    scope = re.search(r"Credential=[^/]+/\d{8}/([^/]+)/([^/]+)/aws4_request", self.headers.get("Authorization", ""))
    if scope is None or scope.groups() != (stack.region_name, "cloudformation"):
        raise SignatureError("SignalResource must be SigV4-signed for cloudformation in " + stack.region_name)
    resource = stack.template_dict.get("Resources", {}).get(logical_id)
    if resource is None:
        raise ValidationError(message="Resource " + str(logical_id) + " does not exist for stack " + stack.name)
    if status not in ("SUCCESS", "FAILURE") or not unique_id:
        raise ValidationError(message="Status must be SUCCESS or FAILURE, with a UniqueId")
    action = "UPDATE" if stack.status.startswith("UPDATE") else "CREATE"
    stack.events.append(Event(
        stack_id=stack.stack_id, stack_name=stack.name, logical_resource_id=logical_id,
        physical_resource_id=logical_id, resource_type=resource.get("Type", ""),
        resource_status=action + "_IN_PROGRESS",
        resource_status_reason="Received " + status + " signal with UniqueId " + unique_id,
        resource_properties=None))
    return EmptyResult()


CloudFormationResponse.signal_resource = signal_resource

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
