#ifndef GS_DRAEXTENDED_H
#define GS_DRAEXTENDED_H

#include <jansson.h>

/*
 * Extended resources served by DRA (the scheduler's DRAExtendedResource):
 * a pod's `nvidia.com/gpu: 1` on a node whose allocatable lacks it is
 * allocated from the node's ResourceSlices through the DeviceClass that
 * names the resource (docs/guide/dra.md "Extended resources through DRA").
 * Pure; every json_t passed in is borrowed.
 */

/*
 * Resource name -> DeviceClass name, as k8s.io/dynamic-resource-allocation
 * v0.37.2 deviceclass/extendedresourcecache resolves them: every class's
 * spec.extendedResourceName and the implicit
 * deviceclass.resource.kubernetes.io/<class>; when two classes name one
 * resource the newer creationTimestamp wins, then the lower name. A new
 * object (empty when there are no classes).
 */
json_t *draextended_classes(const json_t *device_classes);

/*
 * The claim the scheduler makes for a pod's extended resources
 * (extendeddynamicresources.go): in the pod's namespace, one `exactly`
 * request per resource, named for it, of its class with ExactCount
 * `count`. `requests` is an array of {"name", "class", "count"} objects.
 * A new object.
 */
json_t *draextended_claim(const char *ns, const char *pod, const json_t *requests);

#endif
